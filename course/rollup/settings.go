package rollup

import (
	"fmt"
	"strconv"
	"strings"
)

// Setting ids the rollup reads (the engine configuration cascade resolves them).
const (
	SettingStatusRollupMode   = "PlayerStatusRollupModeValue"
	SettingThresholdScore     = "PlayerStatusRollupModeThresholdScore"
	SettingScoreRollupMode    = "PlayerScoreRollupModeValue"
	SettingScoringObjects     = "PlayerScoreRollupModeNumberOfScoringObjects"
	SettingScaleRawScore      = "PlayerScaleRawScore"
	SettingCompletionOfFailed = "PlayerCompletionStatOfFailedSuccessStat"
	SettingApplyStatusToSucc  = "PlayerApplyRollupStatusToSuccess"
	SettingScoreOverrides     = "PlayerScoreOverridesStatus"
	SettingSatisfiedCompletes = "PlayerSatisfiedCausesCompletion"
	SettingEmptySetUnknown    = "PlayerRollupEmptySetToUnknown"
)

// Status rollup modes of PlayerStatusRollupModeValue (Rustici Engine's values).
const (
	StatusProvidedByCourse          = "STATUS_PROVIDED_BY_COURSE"
	CompleteWhenAllUnitsComplete    = "COMPLETE_WHEN_ALL_UNITS_COMPLETE"
	CompleteWhenAllCompleteNotFail  = "COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_NOT_FAILED"
	CompleteWhenThresholdScoreMet   = "COMPLETE_WHEN_THRESHOLD_SCORE_IS_MET"
	CompleteWhenAllCompleteAndScore = "COMPLETE_WHEN_ALL_UNITS_COMPLETE_AND_THRESHOLD_SCORE_IS_MET"
	CompleteWhenAllUnitsPassed      = "COMPLETE_WHEN_ALL_UNITS_ARE_PASSED"
)

// Score rollup modes of PlayerScoreRollupModeValue (Rustici Engine's values).
const (
	ScoreProvidedByCourse     = "SCORE_PROVIDED_BY_COURSE"
	AverageOfAllUnits         = "AVERAGE_SCORE_OF_ALL_UNITS"
	AverageOfUnitsWithScores  = "AVERAGE_SCORE_OF_ALL_UNITS_WITH_SCORES"
	FixedAverage              = "FIXED_AVERAGE"
	AverageOfNonzeroScores    = "AVERAGE_SCORE_OF_ALL_UNITS_WITH_NONZERO_SCORES"
	LastSCOScore              = "LAST_SCO_SCORE"
	completionOfFailedDefault = "completed"
)

// StatusRollupModes returns the values PlayerStatusRollupModeValue accepts.
func StatusRollupModes() []string {
	return []string{StatusProvidedByCourse, CompleteWhenAllUnitsComplete, CompleteWhenAllCompleteNotFail,
		CompleteWhenThresholdScoreMet, CompleteWhenAllCompleteAndScore, CompleteWhenAllUnitsPassed}
}

// ScoreRollupModes returns the values PlayerScoreRollupModeValue accepts.
func ScoreRollupModes() []string {
	return []string{ScoreProvidedByCourse, AverageOfAllUnits, AverageOfUnitsWithScores, FixedAverage,
		AverageOfNonzeroScores, LastSCOScore}
}

// Settings are the effective rollup settings of an instance.
type Settings struct {
	// StatusRollupMode is how a SCORM 1.2 / AICC cluster's completion rolls up from its
	// units (StatusRollupModes).
	StatusRollupMode string
	// ThresholdScore (0-100) completes a cluster in the threshold modes.
	ThresholdScore float64
	// ScoreRollupMode is how a SCORM 1.2 / AICC cluster's score rolls up (ScoreRollupModes).
	ScoreRollupMode string
	// ScoringObjects is the divisor of FIXED_AVERAGE (at least 1).
	ScoringObjects int
	// ScaleRawScore derives a SCORM 2004 scaled score from raw/min/max when the content
	// reports only a raw score.
	ScaleRawScore bool
	// CompletionOfFailed is the completion of a SCORM 1.2 unit whose lesson_status is
	// failed: "completed", "incomplete" or "unknown".
	CompletionOfFailed string
	// ApplyStatusToSuccess makes a SCORM 1.2 / AICC cluster's success follow its status
	// rollup: PASSED when the status mode is met, FAILED when it is not although every unit
	// is complete, else UNKNOWN (PlayerApplyRollupStatusToSuccess).
	ApplyStatusToSuccess bool
	// ScoreOverridesStatus lets a SCORM 1.2 / AICC unit's raw score against its mastery
	// score decide passed/failed whatever lesson_status the content reported; false: only
	// when the content reported none (PlayerScoreOverridesStatus).
	ScoreOverridesStatus bool
	// SatisfiedCausesCompletion completes a SCORM 2004 activity whose objective is
	// satisfied (PlayerSatisfiedCausesCompletion).
	SatisfiedCausesCompletion bool
	// EmptySetToUnknown leaves a SCORM 2004 cluster's status and completion unknown when no
	// child contributes to its default rollup; false: the empty set is satisfied and
	// completed, as Engine's default rollup has it (PlayerRollupEmptySetToUnknown).
	EmptySetToUnknown bool
}

// DefaultSettings returns the catalogue defaults: Engine's observed defaults for the two
// rollup modes (course-engine-semantics.md §2.8), threshold 80, FIXED_AVERAGE over 1, raw
// scores not scaled, and failed units counted as completed (§2.9's split). The four tweaks
// default to what the standards say (docs/decisions.md, "Run-time and rollup settings"):
// the mastery score decides (SCORM 1.2 RTE 3-24), an empty contributing set fires no rule
// (IMS SS RB.1.4), success and completion stay apart.
func DefaultSettings() Settings {
	return Settings{StatusRollupMode: CompleteWhenAllCompleteNotFail, ThresholdScore: 80,
		ScoreRollupMode: AverageOfUnitsWithScores, ScoringObjects: 1, CompletionOfFailed: completionOfFailedDefault,
		ScoreOverridesStatus: true, EmptySetToUnknown: true}
}

// SettingIDs returns the ids ParseSettings reads.
func SettingIDs() []string {
	return []string{SettingStatusRollupMode, SettingThresholdScore, SettingScoreRollupMode, SettingScoringObjects,
		SettingScaleRawScore, SettingCompletionOfFailed, SettingApplyStatusToSucc, SettingScoreOverrides,
		SettingSatisfiedCompletes, SettingEmptySetUnknown}
}

// ParseSettings builds Settings from effective setting values keyed by id (the catalogue's
// canonical strings); a missing or empty id keeps its default. An invalid value is an
// error naming the setting, since the catalogue validated it on the way in.
func ParseSettings(values map[string]string) (Settings, error) {
	s := DefaultSettings()
	if v := values[SettingStatusRollupMode]; v != "" {
		if !oneOf(v, StatusRollupModes()) {
			return s, fmt.Errorf("rollup: %s %q is not a status rollup mode", SettingStatusRollupMode, v)
		}
		s.StatusRollupMode = strings.ToUpper(v)
	}
	if v := values[SettingScoreRollupMode]; v != "" {
		if !oneOf(v, ScoreRollupModes()) {
			return s, fmt.Errorf("rollup: %s %q is not a score rollup mode", SettingScoreRollupMode, v)
		}
		s.ScoreRollupMode = strings.ToUpper(v)
	}
	if v := values[SettingThresholdScore]; v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 100 {
			return s, fmt.Errorf("rollup: %s %q is not a score 0-100", SettingThresholdScore, v)
		}
		s.ThresholdScore = f
	}
	if v := values[SettingScoringObjects]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("rollup: %s %q is not a count of at least 1", SettingScoringObjects, v)
		}
		s.ScoringObjects = n
	}
	for id, dst := range map[string]*bool{SettingScaleRawScore: &s.ScaleRawScore, SettingApplyStatusToSucc: &s.ApplyStatusToSuccess,
		SettingScoreOverrides: &s.ScoreOverridesStatus, SettingSatisfiedCompletes: &s.SatisfiedCausesCompletion,
		SettingEmptySetUnknown: &s.EmptySetToUnknown} {
		if v := values[id]; v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return s, fmt.Errorf("rollup: %s %q is not a boolean", id, v)
			}
			*dst = b
		}
	}
	if v := values[SettingCompletionOfFailed]; v != "" {
		if !oneOf(v, []string{"completed", "incomplete", "unknown"}) {
			return s, fmt.Errorf("rollup: %s %q is not completed, incomplete or unknown", SettingCompletionOfFailed, v)
		}
		s.CompletionOfFailed = strings.ToLower(v)
	}
	return s, nil
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return true
		}
	}
	return false
}

// SettingsFrom resolves every id of SettingIDs with resolve (typically the configuration
// cascade of the registration: settings.Catalogue.Resolve with the tenant, course and
// registration layers) and parses the values.
func SettingsFrom(resolve func(id string) (string, error)) (Settings, error) {
	values := make(map[string]string, len(SettingIDs()))
	for _, id := range SettingIDs() {
		v, err := resolve(id)
		if err != nil {
			return DefaultSettings(), fmt.Errorf("rollup: setting %s: %w", id, err)
		}
		values[id] = v
	}
	return ParseSettings(values)
}
