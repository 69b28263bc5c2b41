package rollup

import (
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/course/settings"
)

// TestCatalogueMatchesRollup: the catalogue serves exactly the values the rollup
// understands, and its defaults are DefaultSettings, so a value written through the
// configuration API always reaches the rollup unchanged.
func TestCatalogueMatchesRollup(t *testing.T) {
	cat := settings.Default()
	for id, want := range map[string][]string{SettingStatusRollupMode: StatusRollupModes(), SettingScoreRollupMode: ScoreRollupModes(),
		SettingCompletionOfFailed: {"completed", "incomplete", "unknown"}} {
		s, ok := cat.Lookup(id)
		if !ok {
			t.Fatalf("catalogue lacks %s", id)
		}
		if !slices.Equal(s.Allowed, want) {
			t.Errorf("%s allows %v, rollup knows %v", id, s.Allowed, want)
		}
	}
	got, err := SettingsFrom(func(id string) (string, error) { return cat.Resolve(id) })
	if err != nil {
		t.Fatal(err)
	}
	if got != DefaultSettings() {
		t.Fatalf("catalogue defaults give %+v, DefaultSettings is %+v", got, DefaultSettings())
	}
	// A registration-level value travels through the cascade into the rollup.
	reg := settings.Layer{Level: settings.LevelRegistration, Values: map[string]string{
		SettingStatusRollupMode: "complete_when_threshold_score_is_met", SettingThresholdScore: "55"}}
	got, err = SettingsFrom(func(id string) (string, error) { return cat.Resolve(id, reg) })
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusRollupMode != CompleteWhenThresholdScoreMet || got.ThresholdScore != 55 {
		t.Fatalf("registration layer: %+v", got)
	}
	if _, err := SettingsFrom(func(id string) (string, error) { return cat.Resolve(id + "x") }); err == nil {
		t.Fatal("an unresolvable setting is not reported")
	}
}
