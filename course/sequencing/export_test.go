package sequencing

import "testing"

// What the external tests of this directory (sequencing_test) use of the ADL replay.

// ADLObserver is adlObserver.
type ADLObserver = adlObserver

// ADLCaseNames is adlCaseNames.
func ADLCaseNames(t testing.TB) []string { return adlCaseNames(t) }

// ADLReplay replays one ADL case with its script's words, as TestADLSurvey does, calling obs.
func ADLReplay(t testing.TB, name string, learner Globals, obs ADLObserver) []string {
	problems, _ := adlReplay(t, name, commandWords(t), learner, obs)
	return problems
}
