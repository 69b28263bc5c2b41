package settings

// postbackSettings name where a registration's report is posted when its own postBack does
// not, and how every post-back is delivered (workers/postbackjob and the server's commit path
// read them; server/engineapi/settings_postback_test.go shows each effect). Defaults are the spec's
// postBack defaults (FORM, COURSE, XML) and otherwise Engine's; docs/decisions.md, "Post-back
// delivery", says where they differ and why.
func postbackSettings() []Setting {
	return []Setting{
		{ID: "ApiRollupRegistrationPostBackUrl", Type: TypeURL, Outbound: true, Levels: cascading,
			Description: "URL to which the registration report is posted whenever its rollup changes; no post-back when empty. A registration's postBack.url overrides it."},
		{ID: "ApiRollupRegistrationAuthType", Type: TypeEnum, Default: "form", Allowed: []string{"form", "httpbasic"}, Levels: cascading,
			Description: "form: fields username, password and data (the report); httpbasic: an Authorization header with the report as the body."},
		text("ApiRollupRegistrationAuthUser", "", cascading, "User name sent to the post-back URL."),
		secret(text("ApiRollupRegistrationAuthPassword", "", cascading,
			"Password sent to the post-back URL, and the key of the X-Lectern-Signature HMAC. Write-only.")),
		{ID: "ApiRollupRegistrationFormat", Type: TypeEnum, Default: "course", Allowed: []string{"course", "activity", "full"}, Levels: cascading,
			Description: "Detail of the posted report: course summary, activity tree, or full run-time detail."},
		boolean("ApiRollupRegistrationDuringSession", "true", cascading,
			"true: post the report whenever a commit changes the rollup while the learner is in the course; false: only when the content exits (its terminating commit, or AICC ExitAU)."),
		boolean("ApiRollupRegistrationSynchronous", "true", cascading,
			"true: the first attempt is made before the commit that caused it answers, so the receiver has the report before the player exits; retries are queued. false: every attempt is queued."),
		integer("ApiPostbackTimeoutSeconds", "10", 1, 300, cascading,
			"Seconds one post-back request may take before it counts as failed (and is retried)."),
		{ID: "ApiPostbackDataModelVersion", Type: TypeEnum, Default: "v1", Allowed: []string{"v1", "v2"}, Levels: cascading,
			Description: "v1: the registrationreport XML; v2: the JSON report (the fields of progress, plus activityDetails as progress/detail for activity and full)."},
		integer("SimpleQueueMaxTries", "8", 1, 100, LevelTenant,
			"Attempts a post-back gets (the inline one included) before it is given up and logged as such."),
	}
}
