package settings

import "slices"

// tenantCourse settings may be set at tenant or course level: they shape how a course is
// imported or exposed but have no per-learner meaning.
const tenantCourse = LevelTenant | LevelCourse

// cascading settings may be set at tenant, course or registration level.
const cascading = LevelTenant | LevelCourse | LevelRegistration

func boolean(id, def string, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeBool, Default: def, Levels: levels, Description: desc}
}

// integer builds a bounded int setting.
func integer(id, def string, min, max int64, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeInt, Default: def, Bounded: true, Min: min, Max: max,
		Levels: levels, Description: desc}
}

func text(id, def string, levels Level, desc string) Setting {
	return Setting{ID: id, Type: TypeString, Default: def, Levels: levels, Description: desc}
}

func secret(s Setting) Setting { s.Secret = true; return s }

// builtin is the seed table: only the settings whose effect Lectern implements today, each
// with an HTTP test of that effect (server/engineapi/settings_test.go). Settings of the player,
// registrations, postbacks, launch, statement forwarding and skills generation were taken
// out until the feature they govern exists: docs/decisions.md ("Settings that do nothing")
// lists them with their semantics, to restore with that feature. Defaults are Engine's
// where course-engine-semantics.md gives them.
func builtin() []Setting {
	core := []Setting{
		// --- Paging (reference §2.2) ---
		integer("ApiResultLimit", "100", 1, 1000, LevelTenant,
			"Page size of course and registration lists when since is given. Capped at 1000 to bound response size."),
		integer("ApiResultLimitSinceNotSpecified", "10", 1, 1000, LevelTenant,
			"Page size of course and registration lists when the caller gives no since; small because unfiltered listing is meant for testing."),

		// --- xAPI ---
		boolean("xAPIEnabled", "true", cascading,
			"Whether courses and registrations expose their xAPI ids (xapiActivityId and xapiRegistrationId answer 404 when false). Lectern's name for the switch the spec calls 'xAPI enabled'."),
		secret(text("xAPIBasicAccounts", "", LevelTenant,
			"Basic-auth accounts of the tenant's record store, one <username>:<password>:<level> per line or comma (levels root, readwrite, readonly, person). Write-only.")),

		// --- Import (reference §2.3) ---
		boolean("EnableExistingActivityIdParserWarnings", "true", LevelTenant,
			"Warn at import (parserWarnings) when an xAPI or cmi5 activity id of the package is already used by another course of the tenant or already recorded in its record store."),
		boolean("ValidateManifestsUsingXsd", "true", LevelTenant,
			"Validate imported SCORM manifests against their standard's XSD (the copies the package ships, else LECTERN_SCHEMA_DIR) and refuse a manifest that does not conform; cmi5.xml is always validated, as the cmi5 specification requires."),

		// --- xAPI integration layer (spec/002 Authentication) ---
		secret(Setting{ID: "TinCanRootAccount", Type: TypeCredentials, Levels: LevelTenant,
			Description: "One <username>:<password> account with full (root) authority on the tenant's record store. Write-only."}),
		secret(text("TinCanBasicAccounts", "", LevelTenant,
			"Basic-auth accounts of the tenant's record store, same format as xAPIBasicAccounts. Write-only.")),
	}
	// One group per feature, each in its own seed_<feature>.go.
	return slices.Concat(core, rollupSettings(), postbackSettings(), registrationSettings(), sessionsSettings(), runtimeSettings(), chromeSettings(), xapiregSettings(), convertSettings(), forwardSettings())
}
