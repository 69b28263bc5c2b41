package settings

// convertSettings govern the conversion of SCORM run-time data into xAPI statements in the
// tenant's record store (server/xapiconv.go; server/engineapi/settings_convert_test.go shows each effect).
func convertSettings() []Setting {
	return []Setting{
		{ID: "SystemHomepageUrl", Type: TypeURL, Levels: LevelTenant,
			Description: "Account homePage of the actors of statements Lectern writes for learners of LMS-style (SCORM) launches; empty: the server's public URL."},
		boolean("ConvertTinCanFromScormRealtime", "false", cascading,
			"Write xAPI SCORM Profile statements (initialized, resumed, responded, scored, completed, passed, failed, suspended, terminated) into the tenant's record store as the player stores SCORM run-time data."),
		boolean("ConvertTinCanFromScormHistorical", "false", LevelTenant,
			"Setting it to true queues a job that converts the stored SCORM run-time data of every registration of the tenant into xAPI statements; each setting to true runs it again and adds nothing twice."),
	}
}
