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
	}
}
