package settings

// launchTypes are Engine's ways of opening the player and its activities.
var launchTypes = []string{"FRAMESET", "NEW_WINDOW", "NEW_WINDOW_AFTER_CLICK", "NEW_WINDOW_WITHOUT_BROWSER_TOOLBAR",
	"NEW_WINDOW_AFTER_CLICK_WITHOUT_BROWSER_TOOLBAR"}

// packageBool is an Engine "package property": its empty default means "the package's value",
// which for SCORM, AICC and xAPI packages (they carry none) is the one Lectern derives from
// the course's shape (docs/decisions.md, "Player chrome and launch settings").
func packageBool(id, desc string) Setting {
	return Setting{ID: id, Type: TypeBool, Levels: cascading, Description: desc}
}

// chromeSettings govern what the player page shows and how it and its activities open (the
// player page reads them; server/engineapi/settings_chrome_test.go shows each effect).
func chromeSettings() []Setting {
	return []Setting{
		packageBool("PlayerShowFinishButton",
			"Show the player's Exit button, which ends the session (the content finishes and commits) and goes where RedirectOnExitUrl says. Empty: the package's value, shown."),
		packageBool("PlayerShowCloseItem",
			"Show the player's Close item, which closes the current activity (it finishes and commits) without leaving the player. Empty: the package's value, hidden."),
		packageBool("PlayerShowNavBar",
			"Show the Previous and Next buttons. Empty: the package's value, shown for courses with more than one launchable activity."),
		packageBool("PlayerShowProgressBar",
			"Show a progress bar: the share of the course's launchable activities completed. Empty: the package's value, hidden."),
		packageBool("PlayerShowHelp",
			"Show a Help button that opens a panel explaining the player's controls. Empty: the package's value, hidden."),
		packageBool("PlayerShowTitleBar",
			"Show the course title above the content. Empty: the package's value, shown."),
		packageBool("PlayerShowCourseStructure",
			"Show the table of contents beside the content. Empty: the package's value, shown for courses with more than one launchable activity."),
		{ID: "PlayerLaunchType", Type: TypeEnum, Default: "FRAMESET", Allowed: launchTypes, Levels: cascading,
			Description: "How the player opens from its launch link: FRAMESET (in the window that opened the link), NEW_WINDOW (the link's page opens the player in a new window), NEW_WINDOW_AFTER_CLICK (the link's page shows a button that does), and the WITHOUT_BROWSER_TOOLBAR variants (a popup window without toolbar and address bar)."},
		{ID: "PlayerScoLaunchType", Type: TypeEnum, Default: "FRAMESET", Allowed: launchTypes, Levels: cascading,
			Description: "How each activity opens relative to the player: FRAMESET (in the player's frame), NEW_WINDOW (in a window of its own, finding the SCORM API through window.opener), NEW_WINDOW_AFTER_CLICK (after the learner clicks the player's Launch button), and the WITHOUT_BROWSER_TOOLBAR variants (a popup window without toolbar and address bar)."},
		boolean("PromptOnPlayerClose", "false", cascading,
			"Ask the learner to confirm before the player window is closed or left other than by its Exit button (the browser's leave-page prompt)."),
		{ID: "RedirectOnRefreshUrl", Type: TypeURL, Allowed: []string{"closer", "blank", "message"}, Levels: cascading,
			Description: "Where the player goes when its page is reloaded after the learner exited: an absolute URL, or closer, blank or message, as for RedirectOnExitUrl; empty: the course starts again."},
		boolean("RedirectLaunchPageOnExit", "false", cascading,
			"When the player runs in a window opened by another page (its launch page, or an LMS page that opened the link in a new window), send that page to the exit target and close the player window, instead of sending the player window."),
		text("SupplementalQueryStringParametersForAllActivities", "", cascading,
			"Comma-separated names of query parameters which, appended to a launch link, are passed on to every activity the player launches (added to the activity's URL)."),
	}
}
