package settings

// postbackSettings name where a registration's report is posted when its own postBack does
// not (workers/postbackjob reads them; its tests show each effect). Defaults are the spec's
// postBack defaults: FORM and COURSE.
func postbackSettings() []Setting {
	return []Setting{
		{ID: "ApiRollupRegistrationPostBackUrl", Type: TypeURL, Levels: cascading,
			Description: "URL to which the registration report is posted whenever its rollup changes; no post-back when empty. A registration's postBack.url overrides it."},
		{ID: "ApiRollupRegistrationAuthType", Type: TypeEnum, Default: "form", Allowed: []string{"form", "httpbasic"}, Levels: cascading,
			Description: "form: fields username, password and data (the report); httpbasic: an Authorization header with the report as the body."},
		text("ApiRollupRegistrationAuthUser", "", cascading, "User name sent to the post-back URL."),
		secret(text("ApiRollupRegistrationAuthPassword", "", cascading,
			"Password sent to the post-back URL, and the key of the X-Lectern-Signature HMAC. Write-only.")),
		{ID: "ApiRollupRegistrationFormat", Type: TypeEnum, Default: "course", Allowed: []string{"course", "activity", "full"}, Levels: cascading,
			Description: "Detail of the posted report: course summary, activity tree, or full run-time detail."},
	}
}
