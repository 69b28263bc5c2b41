package learner

import (
	"context"
	"strings"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/prereq"
	"github.com/lectern-lms/lectern/course/registration"
)

// Locked returns the launchable activities of a tracked session that the learner may not
// launch yet, each with the prerequisites expression that is not met: SCORM 1.1/1.2
// adlcp:prerequisites and AICC prerequisites (course/prereq), of the activity itself or of
// an item above it. An item's status is what the instance's rollup says (passed, failed,
// completed, incomplete, else not attempted). Previews and review launches track nothing and
// lock nothing; an expression that does not parse locks nothing (it is logged).
func (s *Service) Locked(ctx context.Context, sess *course.SessionClaims, v *course.Version) (map[string]string, error) {
	if sess.Preview || sess.ForceReview || v.Package == nil || v.Package.Root == nil {
		return nil, nil
	}
	if v.Standard != course.SCORM11 && v.Standard != course.SCORM12 && v.Standard != course.AICC {
		return nil, nil
	}
	has := false
	v.Package.Root.Walk(func(a *course.Activity) { has = has || strings.TrimSpace(a.Prerequisites) != "" })
	if !has {
		return nil, nil
	}
	p, err := s.sessionProgress(ctx, sess, v)
	if err != nil || p == nil {
		return nil, err
	}
	items := map[string]bool{}
	v.Package.Root.Walk(func(a *course.Activity) { items[a.ID] = true })
	status := func(id string) (string, bool) {
		if !items[id] {
			return "", false
		}
		o := p.Result.Activities[id]
		switch {
		case o == nil:
			return prereq.NotAttempted, true
		case o.Success == registration.Passed:
			return prereq.Passed, true
		case o.Success == registration.Failed:
			return prereq.Failed, true
		case o.Completion == registration.Completed:
			return prereq.Completed, true
		case o.Completion == registration.Incomplete:
			return prereq.Incomplete, true
		}
		return prereq.NotAttempted, true
	}
	locked := map[string]string{}
	var walk func(a *course.Activity, unmet string)
	walk = func(a *course.Activity, unmet string) {
		if expr := strings.TrimSpace(a.Prerequisites); unmet == "" && expr != "" {
			e, err := prereq.Parse(expr)
			if err != nil {
				s.log.Warn("prerequisites not enforced", "tenant", sess.Tenant, "course", v.CourseID, "activity", a.ID, "error", err)
			} else if !e.Met(status) {
				unmet = expr
			}
		}
		if unmet != "" && Launchable(a) {
			locked[a.ID] = unmet
		}
		for _, c := range a.Children {
			walk(c, unmet)
		}
	}
	walk(v.Package.Root, "")
	return locked, nil
}
