package settings

// xapiregSettings govern xAPI (TinCan) and cmi5 launches and what the record store's
// statements do to registrations (server/player.go, server/rollup.go; effect rows in
// server/engineapi/settings_xapireg_test.go). Defaults and semantics: Engine's (reference §2.10).
func xapiregSettings() []Setting {
	return []Setting{
		boolean("TinCanInteractionsEnabled", "true", cascading,
			"Turn answered statements (verb answered, or a cmi.interaction activity with a result) of xAPI and cmi5 registrations into run-time interactions of the activity they belong to, in progress/detail and FULL post-backs."),
		boolean("GenerateTinCanLaunchStatements", "true", cascading,
			"Record a launched statement (the learner, the started activity, the registration's xAPI registration id) in the tenant's record store when the player launches xAPI (TinCan) content."),
		{ID: "xAPILaunchActorFormat", Type: TypeEnum, Default: "xapi", Allowed: []string{"xapi", "tincan095"}, Levels: cascading,
			Description: "Form of the actor launch parameter of xAPI (TinCan) content: xapi, the learner as an xAPI 1.0 Agent (account with homePage and name); tincan095, the pre-1.0 TinCan form (name and account in arrays, the account as accountServiceHomePage and accountName), for content that reads only that, such as Lectora Inspire's xAPI runtime. The content's statements are the same either way."},
		integer("xAPILaunchTokenLifeInSeconds", "28800", 60, 604800, cascading,
			"Seconds the record-store credential handed to launched xAPI content (the auth launch parameter) and to cmi5 AUs (the fetch URL's auth-token) stays valid."),
		boolean("Cmi5EnforceStatementRules", "true", cascading,
			"Hold the statements and documents a cmi5 AU writes with its session's credential to the cmi5 rules (403 for one that breaks a rule: order, duplicates, launch mode, result, learner preferences, LMS.LaunchData); false: the xAPI rules only, for AUs that break cmi5 rules the learner should not pay for. Fixed at launch."),
		boolean("UseStatementTimestampInRegistrationUpdates", "true", cascading,
			"Date registration updates derived from statements (the completion date of an xAPI or cmi5 registration) by the statement's timestamp; false: by the time the record store stored it."),
	}
}
