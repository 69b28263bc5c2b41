package settings

// Level sets used by the seed table.
const (
	// cascading settings may be set at tenant, course or registration
	// level: Engine's "Registration"-level settings (reference §2.8).
	cascading = LevelTenant | LevelCourse | LevelRegistration
	// tenantCourse settings shape how a course's content is processed but
	// have no per-learner meaning.
	tenantCourse = LevelTenant | LevelCourse
)

// Enumerated value sets, returned by functions so the package holds no
// mutable slices.

func launchTypes() []string {
	return []string{"FRAMESET", "NEW_WINDOW", "NEW_WINDOW_AFTER_CLICK",
		"NEW_WINDOW_WITHOUT_BROWSER_TOOLBAR", "NEW_WINDOW_AFTER_CLICK_WITHOUT_BROWSER_TOOLBAR"}
}

// redirectKeywords are the non-URL targets Engine accepts for exit
// redirects (reference §2.5).
func redirectKeywords() []string { return []string{"closer", "blank", "message"} }

func boolean(id, def string, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeBool, Default: def, Levels: levels, Description: desc}
}

// integer builds a bounded int setting; def is "" for package-defaulted ones.
func integer(id, def string, min, max int64, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeInt, Default: def, Bounded: true, Min: min, Max: max,
		Levels: levels, Description: desc}
}

func enum(id, def string, allowed []string, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeEnum, Default: def, Allowed: allowed, Levels: levels, Description: desc}
}

func text(id, def string, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeString, Default: def, Levels: levels, Description: desc}
}

func secret(s Setting) Setting { s.Secret = true; return s }

// builtin is the seed table: every setting id named in the Lectern spec
// (spec/000 configuration items and launch parameters, spec/001 skills
// configuration, spec/002 xAPI configuration entries) and in
// course-engine-semantics.md §2.2–§2.10. Defaults are Engine's where the
// reference gives them; "" on a non-string setting means the value comes
// from the course package properties (Engine's "pkg").
func builtin() []Setting {
	return []Setting{
		// --- Postback (spec/000 postBack object; reference §2.7, §2.8) ---
		{ID: "ApiRollupRegistrationPostBackUrl", Type: TypeURL, Levels: cascading,
			Description: "URL to which registration progress is posted in real time; postbacks are off when empty."},
		enum("ApiRollupRegistrationAuthType", "form", []string{"form", "httpbasic"}, cascading,
			"How postback credentials are sent: form fields username/password with the report in field data, or an HTTP Basic Authorization header with the report as the body. Default form matches the spec's postBack.authType default (Engine's own default is httpbasic)."),
		text("ApiRollupRegistrationAuthUser", "", cascading,
			"User name for the postback target. Not secret, so operators can see which account is used."),
		secret(text("ApiRollupRegistrationAuthPassword", "", cascading,
			"Password for the postback target. Write-only.")),
		enum("ApiRollupRegistrationFormat", "course", []string{"course", "activity", "full"}, cascading,
			"Detail of the posted registration report: course summary, activity tree, or full runtime detail. Default course matches the spec's postBack.resultsFormat default (Engine's own default is activity)."),
		boolean("ApiRollupRegistrationDuringSession", "true", cascading,
			"Post while the learner is still in the course, not only at exit, so the LMS sees progress early."),
		boolean("ApiRollupRegistrationSynchronous", "true", LevelTenant,
			"Make the first postback attempt inline rather than queued; retries are always queued."),
		integer("ApiPostbackTimeoutSeconds", "10", 1, 300, LevelTenant,
			"Per-request timeout of a postback, so a slow LMS cannot tie up workers."),
		enum("ApiPostbackDataModelVersion", "v2", []string{"v1", "v2"}, LevelTenant,
			"Payload model of postbacks (Engine v1 or v2 data model)."),
		integer("ApiTokenPostbackValidHours", "24", 1, 8760, LevelTenant,
			"Lifetime of the token the player uses for its runtime posts."),
		integer("SimpleQueueMaxTries", "8", 1, 100, LevelSystem,
			"Attempts of a queued background task (e.g. a postback) before it is abandoned."),

		// --- Paging (reference §2.2) ---
		integer("ApiResultLimit", "100", 1, 1000, LevelTenant,
			"Page size of course and registration lists when since is given. Capped at 1000 to bound response size."),
		integer("ApiResultLimitSinceNotSpecified", "10", 1, 1000, LevelTenant,
			"Page size when the caller gives no since; small because unfiltered listing is meant for testing."),

		// --- Launch and exit (spec/000 launch links; reference §2.4, §2.5) ---
		enum("WhenToRestartRegistration", "WHEN_EXISTING_REG_IS_COMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS", []string{
			"NEVER",
			"WHEN_EXISTING_REG_IS_COMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS",
			"WHEN_NEWER_PACKAGE_VERSION_EXISTS",
			"WHEN_EXISTING_REG_IS_COMPLETE",
			"WHEN_EXISTING_REG_IS_SATISFIED",
			"WHEN_EXISTING_REG_IS_SATISFIED_AND_NEWER_PACKAGE_VERSION_EXISTS",
			"WHEN_EXISTING_REG_IS_INCOMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS",
			"WHEN_EXISTING_REG_IS_FAILED",
			"WHEN_EXISTING_REG_IS_FAILED_AND_NEWER_PACKAGE_VERSION_EXISTS",
		}, cascading, "When a launch starts a new registration instance on the latest course version."),
		{ID: "RedirectOnExitUrl", Type: TypeURL, Allowed: redirectKeywords(), Levels: cascading,
			Description: "Where the learner goes on exit when the launch link gives no redirectOnExitUrl: an absolute URL or closer, blank, message."},
		{ID: "RedirectOnRefreshUrl", Type: TypeURL, Allowed: redirectKeywords(), Levels: cascading,
			Description: "Where the learner goes when the player page is refreshed after exit."},
		boolean("RedirectLaunchPageOnExit", "false", cascading,
			"Redirect the launching page itself (not only the player window) on exit."),
		boolean("ApiUseSignedLaunchLinks", "false", LevelTenant,
			"Make the player accept only API-signed launch links, so links cannot be forged."),
		boolean("ConcurrentLaunchDetectionEnabled", "true", cascading,
			"Detect a second concurrent launch of one registration, which would otherwise overwrite progress."),
		boolean("ForceExitConcurrentLaunches", "false", cascading,
			"Exit the earlier session on a concurrent launch instead of showing a warning."),
		text("SupplementalQueryStringParametersForAllActivities", "", cascading,
			"Query-string parameters appended to every activity launch URL."),
		boolean("PromptOnPlayerClose", "false", cascading,
			"Ask the learner to confirm before the player window unloads, to avoid losing unsaved data."),

		// --- Player chrome (spec/000 configuration items; reference §2.8) ---
		boolean("PlayerShowFinishButton", "", cascading, "Show the player's Finish button."),
		boolean("PlayerShowCloseItem", "", cascading, "Show the player's Close (return to LMS) item."),
		boolean("PlayerShowNavBar", "", cascading, "Show the player's navigation bar."),
		boolean("PlayerShowProgressBar", "", cascading, "Show the player's progress bar."),
		boolean("PlayerShowHelp", "", cascading, "Show the player's help item."),
		boolean("PlayerShowTitleBar", "", cascading, "Show the player's title bar."),
		boolean("PlayerShowCourseStructure", "", cascading, "Show the course structure (table of contents) panel."),
		boolean("PlayerCaptureHistoryDetailed", "", cascading, "Record detailed launch history for diagnosis."),
		enum("PlayerLaunchType", "", launchTypes(), cascading, "How the player itself is opened."),
		enum("PlayerScoLaunchType", "", launchTypes(), cascading, "How each SCO is opened inside or beside the player."),

		// --- Player runtime communication (reference §2.8) ---
		integer("PlayerCommCommitFrequency", "", 100, 3_600_000, cascading,
			"Milliseconds between client flushes of dirty runtime data; empty uses the package value or DefaultCommCommitFrequency."),
		integer("DefaultCommCommitFrequency", "10000", 100, 3_600_000, LevelSystem,
			"Deployment default for PlayerCommCommitFrequency, in milliseconds."),
		integer("PlayerCommMaxFailedSubmissions", "", 1, 100, cascading,
			"Failed runtime submissions before the learner is told that progress is not being saved."),
		boolean("PlayerFinishCausesImmediateCommit", "", cascading,
			"Flush runtime data on LMSFinish/Terminate, so progress survives the window closing."),
		integer("PlayerSuspendDataMaxLength", "", 4096, 16_777_216, cascading,
			"Characters allowed in suspend_data; at least SCORM 1.2's 4096 so conformant content never breaks."),
		enum("PlayerResetRunTimeData", "", []string{"NEVER", "WHEN_EXIT_IS_NOT_SUSPEND", "ON_EACH_NEW_SEQUENCING_ATTEMPT"}, cascading,
			"When a SCO's runtime data is reset on relaunch."),
		boolean("PlayerLaunchCompletedRegsAsNoCredit", "", cascading,
			"SCORM 1.2/AICC: relaunch completed registrations in no-credit mode so a review cannot lower the result."),

		// --- SCORM 1.2 rudimentary rollup and rollup tweaks (reference §2.8, §2.9) ---
		enum("PlayerStatusRollupModeValue", "", []string{
			"STATUS_PROVIDED_BY_COURSE",
			"COMPLETE_WHEN_ALL_UNITS_COMPLETE",
			"COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_NOT_FAILED",
			"COMPLETE_WHEN_THRESHOLD_SCORE_IS_MET",
			"COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_THRESHOLD_SCORE_IS_MET",
			"COMPLETE_WHEN_ALL_UNITS_ARE_PASSED",
		}, cascading, "How a multi-SCO SCORM 1.2 course's status rolls up from its SCOs."),
		integer("PlayerStatusRollupModeThresholdScore", "", 0, 100, cascading,
			"Score (0-100) that completes the course in the threshold status rollup modes."),
		enum("PlayerScoreRollupModeValue", "", []string{
			"SCORE_PROVIDED_BY_COURSE",
			"AVERAGE_SCORE_OF_ALL_UNITS",
			"AVERAGE_SCORE_OF_ALL_UNITS_WITH_SCORES",
			"FIXED_AVERAGE",
			"AVERAGE_SCORE_OF_ALL_UNITS_WITH_NONZERO_SCORES",
			"LAST_SCO_SCORE",
		}, cascading, "How a multi-SCO SCORM 1.2 course's score rolls up from its SCOs."),
		integer("PlayerScoreRollupModeNumberOfScoringObjects", "", 1, 10_000, cascading,
			"Divisor for FIXED_AVERAGE score rollup; at least 1 to rule out division by zero."),
		boolean("PlayerApplyRollupStatusToSuccess", "", cascading, "Also derive success from the rolled-up status."),
		boolean("PlayerScoreOverridesStatus", "", cascading, "Let a reported score decide passed/failed over the reported status."),
		boolean("PlayerSatisfiedCausesCompletion", "", cascading, "Treat a satisfied (passed) activity as completed."),
		enum("PlayerCompletionStatOfFailedSuccessStat", "", []string{"unknown", "completed", "incomplete"}, cascading,
			"Completion status reported for an activity whose success status is failed."),
		boolean("PlayerRollupEmptySetToUnknown", "", cascading, "Roll up an empty set of contributing children to unknown rather than satisfied/completed."),
		boolean("PlayerScaleRawScore", "", cascading, "Derive a scaled score from raw/min/max when content reports only a raw score."),
		enum("PlayerLookaheadSequencerMode", "", []string{"DISABLED", "ENABLED", "REALTIME"}, cascading,
			"Whether the SCORM 2004 look-ahead sequencer evaluates navigation availability, and how often."),

		// --- xAPI / embedded LRS (reference §2.8, §2.10) ---
		boolean("TinCanInteractionsEnabled", "true", tenantCourse,
			"Extract interaction detail from xAPI statements into progress and full postbacks."),
		boolean("GenerateTinCanLaunchStatements", "true", tenantCourse,
			"Write launched statements when xAPI content is launched."),
		integer("xAPILaunchTokenLifeInSeconds", "28800", 60, 604_800, LevelTenant,
			"Lifetime of the credentials handed to launched xAPI content."),
		text("xAPIUrlPrefix", "lrs", LevelSystem,
			"Mount path of the embedded LRS (Engine used TCAPI before 2018); deployment-wide because it shapes routing."),
		secret(text("xAPIBasicAccounts", "", LevelTenant,
			"Basic-auth accounts of the embedded LRS with their permission levels. Write-only.")),
		boolean("xAPIEnabled", "true", tenantCourse,
			"Whether courses and registrations expose xAPI ids (xapiActivityId, xapiRegistrationId answer 404 when false). Lectern's name for the switch the spec calls 'xAPI enabled'."),
		boolean("xAPIValidations", "true", LevelTenant,
			"Validate incoming statements strictly against the xAPI specification."),
		boolean("UseStatementTimestampInRegistrationUpdates", "true", tenantCourse,
			"Date registration updates derived from statements by the statement timestamp rather than arrival time."),

		// --- Launch history and import (reference §2.3, §2.8) ---
		integer("ExpireLaunchHistoryAfterDays", "30", 1, 3650, LevelTenant,
			"Age in days after which launch history is purged, when ShouldExpireLaunchHistory is true."),
		boolean("ShouldExpireLaunchHistory", "false", LevelTenant, "Purge old launch history to bound storage."),
		boolean("EnableExistingActivityIdParserWarnings", "true", LevelTenant,
			"Warn at import when an activity id is already mapped to another package or present in the LRS."),
		boolean("ValidateManifestsUsingXsd", "true", LevelTenant,
			"Validate imported SCORM manifests against their standard's XSD (the copies the package ships, else LECTERN_SCHEMA_DIR) and refuse a manifest that does not conform; cmi5.xml is always validated, as the cmi5 specification requires."),

		// --- Tenancy (reference §2.8) ---
		text("AllowedTenantNames", "", LevelSystem,
			"Comma-separated tenant names that may be auto-created on first use; empty allows any."),
		{ID: "AllowedTenantNameRegex", Type: TypeRegex, Levels: LevelSystem,
			Description: "Regular expression tenant names must match to be auto-created; empty allows any."},

		// --- xAPI integration layer (spec/002 Authentication and Limits) ---
		secret(Setting{ID: "TinCanRootAccount", Type: TypeCredentials, Levels: LevelTenant,
			Description: "One <username>:<password> account with full (root) LRS authority. Write-only."}),
		secret(text("TinCanBasicAccounts", "", LevelTenant,
			"Common basic-auth accounts of the LRS; the statement viewer needs at least one read-only account. Write-only.")),
		{ID: "SystemHomepageUrl", Type: TypeURL, Levels: LevelTenant,
			Description: "Base URL (account homePage) of actors created implicitly by LMS-style launches; typically the core service URL."},
		boolean("ConvertTinCanFromScormRealtime", "false", LevelTenant,
			"Convert SCORM registrations to xAPI statements as they happen."),
		boolean("ConvertTinCanFromScormHistorical", "false", LevelTenant,
			"Convert existing SCORM registrations to xAPI statements retroactively."),
		integer("TinCanStatementForwardSleepTime", "10000", 100, 3_600_000, LevelSystem,
			"Milliseconds the forwarding worker sleeps before polling source stores again."),
		integer("TinCanStatementForwardMaxBackoffHours", "24", 1, 720, LevelSystem,
			"Cap of the exponential backoff after a failed forward, so a broken destination is retried at least this often."),
		integer("TinCanStatementForwardStmtBatchSize", "100", 1, 10_000, LevelSystem,
			"Statements gathered per forwarding batch."),
		integer("TinCanStatementForwardWebTimeout", "30000", 1000, 600_000, LevelSystem,
			"Milliseconds timeout of the HTTP requests that gather and post forwarded statements."),

		// --- Content service (spec/001 Skills configuration) ---
		text("GENERATION__SKILL_TAXONOMY", "", LevelTenant,
			"taxonomy_id of the imported skills taxonomy used for skills generation; empty generates without a taxonomy."),
	}
}
