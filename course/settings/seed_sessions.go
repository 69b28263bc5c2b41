package settings

// sessionsSettings govern player sessions: how long one may post runtime data and what a
// second launch of the same registration does to one still open (docs/decisions.md, "Player
// sessions").
func sessionsSettings() []Setting {
	return []Setting{
		integer("ApiTokenPostbackValidHours", "24", 1, 8760, cascading,
			"Hours a player session may post runtime data (commits, heartbeats, HACP calls) after its launch; later posts are refused and the learner is asked to launch again."),
		boolean("ConcurrentLaunchDetectionEnabled", "true", cascading,
			"Detect a launch of a registration while an earlier session of it is open: the earlier session's commits are then refused and its player warns that the course was opened elsewhere (or exits, with ForceExitConcurrentLaunches). False: both sessions save, the last write wins."),
		boolean("ForceExitConcurrentLaunches", "false", cascading,
			"With ConcurrentLaunchDetectionEnabled, exit an earlier open session of a registration that is launched again (what it saved so far is kept) instead of leaving it open with a warning."),
	}
}
