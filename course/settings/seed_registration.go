package settings

// registrationSettings govern registrations at launch (the player reads them; its tests show
// each effect).
func registrationSettings() []Setting {
	return []Setting{
		{ID: "WhenToRestartRegistration", Type: TypeEnum, Default: "WHEN_EXISTING_REG_IS_COMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS",
			Allowed: []string{
				"WHEN_EXISTING_REG_IS_COMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS",
				"NEVER",
				"WHEN_NEWER_PACKAGE_VERSION_EXISTS",
				"WHEN_EXISTING_REG_IS_COMPLETE",
				"WHEN_EXISTING_REG_IS_SATISFIED",
				"WHEN_EXISTING_REG_IS_SATISFIED_AND_NEWER_PACKAGE_VERSION_EXISTS",
				"WHEN_EXISTING_REG_IS_INCOMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS",
				"WHEN_EXISTING_REG_IS_FAILED",
				"WHEN_EXISTING_REG_IS_FAILED_AND_NEWER_PACKAGE_VERSION_EXISTS",
			}, Levels: cascading,
			Description: "When a launch starts a new registration instance on the course's latest version instead of resuming the current one."},
		integer("PlayerCommCommitFrequency", "10000", 100, 3_600_000, cascading,
			"Milliseconds between the player's automatic commits of run-time data while content runs (besides the content's own commits and the exit)."),
		{ID: "RedirectOnExitUrl", Type: TypeURL, Allowed: []string{"closer", "blank", "message"}, Levels: cascading,
			Description: "Where the player goes when the learner exits, for launch links and previews that name no redirectOnExitUrl: an absolute URL, or closer (close the window), blank (an empty page) or message (a completion message); empty: the message."},
	}
}
