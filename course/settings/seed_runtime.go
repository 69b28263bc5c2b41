package settings

// runtimeSettings govern the player's run-time environment (what a SCO may store, when its
// data starts afresh, credit on relaunch, the page's commits) and the four rollup tweaks
// course/rollup implements. The player and course/rollup read them; server/engineapi/settings_runtime_test.go
// shows each effect through HTTP. Defaults that Engine leaves to package properties are
// explicit, chosen in docs/decisions.md ("Run-time and rollup settings").
func runtimeSettings() []Setting {
	return []Setting{
		integer("PlayerSuspendDataMaxLength", "64000", 4096, 64000, cascading,
			"Characters a SCO may store in cmi.suspend_data (cmi.core.suspend_data, AICC [Core_Lesson]); a longer value is refused at SetValue and in a commit with the standard's error code (SCORM 1.2: 405, 2004: 407). At least SCORM 1.2's 4096; at most SCORM 2004's 64000, the player runtime's own bound."),
		{ID: "PlayerResetRunTimeData", Type: TypeEnum, Allowed: []string{"NEVER", "WHEN_EXIT_IS_NOT_SUSPEND", "ON_EACH_NEW_SEQUENCING_ATTEMPT"}, Levels: cascading,
			Description: "When a relaunched SCO starts a new attempt with fresh run-time data (cmi.entry ab-initio) instead of the stored data: NEVER; WHEN_EXIT_IS_NOT_SUSPEND (its last exit was not suspend); ON_EACH_NEW_SEQUENCING_ATTEMPT (without a sequencer, the same). Empty: by the standard, WHEN_EXIT_IS_NOT_SUSPEND for SCORM 2004, NEVER for SCORM 1.2 and AICC."},
		boolean("PlayerLaunchCompletedRegsAsNoCredit", "false", cascading,
			"SCORM 1.2 and AICC: a launch of a registration whose progress is COMPLETED runs in no-credit (cmi.core.credit no-credit), and its commits do not change the recorded status or score."),
		integer("PlayerCommMaxFailedSubmissions", "2", 1, 100, cascading,
			"Consecutive failed commits of run-time data after which the player tells the learner that progress is not being saved."),
		boolean("PlayerFinishCausesImmediateCommit", "true", cascading,
			"Commit run-time data as soon as the content calls LMSFinish/Terminate; false: at the player's next scheduled commit (PlayerCommCommitFrequency), or when the learner leaves the player or the activity."),
		boolean("PlayerApplyRollupStatusToSuccess", "false", cascading,
			"SCORM 1.2 and AICC multi-unit rollup: success follows the status rollup mode (PASSED when met, FAILED when every unit is complete and it is not met) instead of the units' own passed/failed."),
		boolean("PlayerScoreOverridesStatus", "true", cascading,
			"SCORM 1.2 and AICC: with a mastery score, credit and normal mode, the raw score decides passed/failed over the lesson_status the content reported; false: only when the content reported none."),
		boolean("PlayerSatisfiedCausesCompletion", "false", cascading,
			"SCORM 2004: an activity whose objective is satisfied is also completed."),
		boolean("PlayerRollupEmptySetToUnknown", "true", cascading,
			"SCORM 2004: a cluster none of whose children contributes to its default rollup stays unknown; false: it is satisfied and completed."),
	}
}
