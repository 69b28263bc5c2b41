package settings

// forwardSettings govern statement forwarding (lrs/forward; spec/002 Limits). They are tenant
// level, not system level as in Engine: Lectern has no system configuration API, and a tenant
// owns its forwarding pairs. The forwarder reads them per tenant on each pass; the tests
// naming them are listed in server/engineapi/settings_test.go's testedElsewhere.
func forwardSettings() []Setting {
	return []Setting{
		integer("TinCanStatementForwardSleepTime", "10000", 10, 3600000, LevelTenant,
			"Milliseconds a forwarding pair waits before polling its source again after it caught up; also the first backoff after a failed forward."),
		integer("TinCanStatementForwardMaxBackoffHours", "24", 1, 720, LevelTenant,
			"Hours the exponentially growing wait after consecutive failed forwards may reach at most."),
		integer("TinCanStatementForwardStmtBatchSize", "100", 1, 1000, LevelTenant,
			"Statements gathered and POSTed to the destination per forwarding request."),
		integer("TinCanStatementForwardWebTimeout", "30000", 100, 600000, LevelTenant,
			"Milliseconds one forwarding request to the destination may take before it counts as failed."),
	}
}
