package settings

// rollupSettings are the SCORM 1.2 / AICC rollup settings and the two rollup tweaks that
// course/rollup implements (its tests show each effect; rollup.ParseSettings reads them).
// Engine leaves their defaults to the package's properties, which Lectern's packages do not
// carry, so the defaults are explicit: Engine's observed defaults for the two modes
// (course-engine-semantics.md §2.8) and §2.9's split of a failed status.
func rollupSettings() []Setting {
	return []Setting{
		{ID: "PlayerStatusRollupModeValue", Type: TypeEnum, Default: "COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_NOT_FAILED",
			Allowed: []string{
				"STATUS_PROVIDED_BY_COURSE",
				"COMPLETE_WHEN_ALL_UNITS_COMPLETE",
				"COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_NOT_FAILED",
				"COMPLETE_WHEN_THRESHOLD_SCORE_IS_MET",
				"COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_THRESHOLD_SCORE_IS_MET",
				"COMPLETE_WHEN_ALL_UNITS_ARE_PASSED",
			}, Levels: cascading,
			Description: "How a multi-SCO SCORM 1.2 or AICC course's (and each of its clusters') completion rolls up from its units; a course of one unit takes that unit's status."},
		integer("PlayerStatusRollupModeThresholdScore", "80", 0, 100, cascading,
			"Score (0-100, as rolled up by PlayerScoreRollupModeValue) that completes the course in the two threshold status rollup modes."),
		{ID: "PlayerScoreRollupModeValue", Type: TypeEnum, Default: "AVERAGE_SCORE_OF_ALL_UNITS_WITH_SCORES",
			Allowed: []string{
				"SCORE_PROVIDED_BY_COURSE",
				"AVERAGE_SCORE_OF_ALL_UNITS",
				"AVERAGE_SCORE_OF_ALL_UNITS_WITH_SCORES",
				"FIXED_AVERAGE",
				"AVERAGE_SCORE_OF_ALL_UNITS_WITH_NONZERO_SCORES",
				"LAST_SCO_SCORE",
			}, Levels: cascading,
			Description: "How a multi-SCO SCORM 1.2 or AICC course's score rolls up from its units' scores (raw scaled by min/max to 0-100)."},
		integer("PlayerScoreRollupModeNumberOfScoringObjects", "1", 1, 10_000, cascading,
			"Divisor of the FIXED_AVERAGE score rollup; at least 1."),
		boolean("PlayerScaleRawScore", "false", cascading,
			"SCORM 2004: derive an activity's measure from score.raw/min/max when the content reports no score.scaled."),
		{ID: "PlayerCompletionStatOfFailedSuccessStat", Type: TypeEnum, Default: "completed",
			Allowed: []string{"completed", "incomplete", "unknown"}, Levels: cascading,
			Description: "Completion of a SCORM 1.2 or AICC unit whose lesson_status is failed."},
	}
}
