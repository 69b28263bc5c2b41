// Package cmi5rules holds the cmi5 rules an LMS's record store enforces on the statements an
// AU writes with its session's credential (cmi5 sections 6.3, 9 and 10.2.2): pure checks of one
// batch against what the session and the registration said before, which the learner's path
// reads from the registration's fold and passes in.
package cmi5rules

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The cmi5 ids the rules and the LMS's own statements use.
const (
	// CategoryMoveOn is the context category of statements that decide moveOn.
	CategoryMoveOn = "https://w3id.org/xapi/cmi5/context/categories/moveon"
	// ExtMasteryScore is the context extension carrying the launch's masteryScore.
	ExtMasteryScore = "https://w3id.org/xapi/cmi5/context/extensions/masteryscore"
	verbVoided      = "http://adlnet.gov/expapi/verbs/voided"
)

// cmi5Statement is the part of a statement the cmi5 rules read.
type cmi5Statement struct {
	ID    string `json:"id"`
	Actor struct {
		ObjectType string `json:"objectType"`
		Account    *struct {
			HomePage string `json:"homePage"`
			Name     string `json:"name"`
		} `json:"account"`
	} `json:"actor"`
	Verb   struct{ ID string } `json:"verb"`
	Object struct {
		ID string `json:"id"`
	} `json:"object"`
	Result *struct {
		Success    *bool           `json:"success"`
		Completion *bool           `json:"completion"`
		Duration   string          `json:"duration"`
		Score      json.RawMessage `json:"score"`
	} `json:"result"`
	Context *struct {
		Registration      string `json:"registration"`
		ContextActivities struct {
			Category []struct{ ID string } `json:"category"`
		} `json:"contextActivities"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	} `json:"context"`
	Timestamp string `json:"timestamp"`
}

func (st *cmi5Statement) category(id string) bool {
	if st.Context == nil {
		return false
	}
	for _, c := range st.Context.ContextActivities.Category {
		if c.ID == id {
			return true
		}
	}
	return false
}

func (st *cmi5Statement) extension(key string) (json.RawMessage, bool) {
	if st.Context == nil || st.Context.Extensions == nil {
		return nil, false
	}
	v, ok := st.Context.Extensions[key]
	return v, ok
}

// refusal is the record store's 403 for a statement that breaks a cmi5 rule.
func refusal(i int, req, format string, args ...any) error {
	return fmt.Errorf("%w: statements[%d] breaks cmi5 %s: %s", access.ErrForbidden, i, req, fmt.Sprintf(format, args...))
}

// Check holds batch (original: the statements as the AU sent them, in order) to the cmi5
// rules of the AU session c launched for the actor ifi: sess and au are what the session and
// the AU's registration recorded so far (tracked: the session has a registration instance; a
// preview's has none), and the batch's own statements count in them in order. A statement
// that breaks a rule refuses the whole batch with an error wrapping access.ErrForbidden that
// names the statement and the requirement.
func Check(c *course.CMI5Session, ifi string, tracked bool, sess *registration.CMI5SessionFold, au *registration.ActivityFold,
	original []json.RawMessage, batch []*statements.Statement) error {
	for i := range batch {
		var st cmi5Statement
		if err := json.Unmarshal(original[i], &st); err != nil {
			return err
		}
		if st.Verb.ID == verbVoided || batch[i].Voids != "" {
			return refusal(i, "6.3.0.0-1", "an AU may not void statements")
		}
		if st.ID == "" {
			return refusal(i, "9.1.0.0-1", "an AU's statement must have an id")
		}
		if st.Timestamp == "" {
			return refusal(i, "9.7.0.0-1", "an AU's statement must have a timestamp")
		}
		// Every statement of the session's credential belongs to the session: none before
		// initialized, none after terminated or abandoned.
		if sess.Ended {
			return refusal(i, "9.3.0.0-5", "the session has ended (terminated or abandoned); nothing more is recorded for it")
		}
		// A preview's session keeps no record (its registration is no instance's), so
		// only what each statement says for itself is checked there.
		if tracked && !slices.Contains(sess.Verbs, rollup.VerbInitialized) && st.Verb.ID != rollup.VerbInitialized {
			return refusal(i, "9.3.0.0-4", "the first statement of a session must be initialized")
		}
		if st.Verb.ID == rollup.VerbInitialized && !sess.PrefsRead && tracked {
			return refusal(i, "11.0.0.0-3", "the AU must read the learner preferences (Agent Profile cmi5LearnerPreferences) before it initializes")
		}
		defined := st.category(rollup.CMI5Category)
		sid, hasSession := st.extension(rollup.CMI5SessionExt)
		// Every statement of an AU session is cmi5 defined or cmi5 allowed, and names it.
		if !hasSession {
			return refusal(i, "9.6.3.1-4", "a statement of a cmi5 session must carry the session id extension")
		}
		var got string
		if json.Unmarshal(sid, &got) != nil || got != c.Session {
			return refusal(i, "9.6.3.1-4", "the session id extension is not the session's (%s)", c.Session)
		}
		if !defined && st.category(CategoryMoveOn) && (st.Result == nil || (st.Result.Success == nil && st.Result.Completion == nil)) {
			return refusal(i, "9.6.2.2-2", "only statements with result.success or result.completion carry the moveOn category")
		}
		if st.Context == nil || !strings.EqualFold(st.Context.Registration, c.Registration) {
			return refusal(i, "9.6.1.0-1", "context.registration must be the launch's registration %s", c.Registration)
		}
		if !utcTimestamp(st.Timestamp) {
			return refusal(i, "9.7.0.0-2", "the timestamp %q is not in UTC", st.Timestamp)
		}
		if defined {
			if err := checkDefined(i, &st, ifi, c, sess, au); err != nil {
				return err
			}
		}
		if st.Verb.ID == rollup.VerbTerminated {
			sess.Ended = true
		}
	}
	return nil
}

// checkDefined checks one cmi5 defined statement against the session and registration
// so far, and counts it in them.
func checkDefined(i int, st *cmi5Statement, ifi string, c *course.CMI5Session, sess *registration.CMI5SessionFold, au *registration.ActivityFold) error {
	v := st.Verb.ID
	switch v {
	case rollup.VerbInitialized, rollup.VerbCompleted, rollup.VerbPassed, rollup.VerbFailed, rollup.VerbTerminated:
	default:
		return refusal(i, "9.3.0.0-1", "%s is not a verb an AU may use in a cmi5 defined statement", v)
	}
	if st.Actor.ObjectType != "" && st.Actor.ObjectType != "Agent" {
		return refusal(i, "9.2.0.0-2", "the actor must be an Agent")
	}
	if st.Actor.Account == nil {
		return refusal(i, "9.2.0.0-3", "the actor must be identified by an account")
	}
	if "account:"+st.Actor.Account.HomePage+"|"+st.Actor.Account.Name != ifi {
		return refusal(i, "9.2.0.0-3", "the actor is not the launch's actor")
	}
	if st.Object.ID != c.ActivityID {
		return refusal(i, "8.1.5.0-6", "the object must be the launch's activityId %s", c.ActivityID)
	}
	if slices.Contains(sess.Verbs, v) {
		return refusal(i, "9.3.0.0-2", "%s was already used in this session", v)
	}
	judged := v == rollup.VerbPassed || v == rollup.VerbFailed
	if judged && (slices.Contains(sess.Verbs, rollup.VerbPassed) || slices.Contains(sess.Verbs, rollup.VerbFailed)) {
		return refusal(i, "9.3.0.0-3", "a session may not be both passed and failed")
	}
	if (judged || v == rollup.VerbCompleted) && c.Mode != "Normal" && c.Mode != "" {
		req := "10.2.2.0-3"
		if c.Mode == "Browse" {
			req = "10.2.2.0-2"
		}
		return refusal(i, req, "%s is not recorded in a session of launchMode %s", v, c.Mode)
	}
	switch {
	case v == rollup.VerbCompleted && au.Completed:
		return refusal(i, "9.3.3.0-2", "the AU was already completed in this registration")
	case v == rollup.VerbPassed && au.Passed:
		return refusal(i, "9.3.4.0-3", "the AU was already passed in this registration")
	case v == rollup.VerbFailed && au.Passed:
		return refusal(i, "9.3.0.0-8", "a failed statement may not follow a passed one in a registration")
	}
	var res struct {
		Scaled *float64 `json:"scaled"`
		Raw    *float64 `json:"raw"`
		Min    *float64 `json:"min"`
		Max    *float64 `json:"max"`
	}
	hasScore := st.Result != nil && len(st.Result.Score) > 0 && string(st.Result.Score) != "null"
	if hasScore {
		_ = json.Unmarshal(st.Result.Score, &res)
		if !judged {
			return refusal(i, "9.5.1.0-2", "only passed and failed statements may have a score")
		}
		if res.Raw != nil && (res.Min == nil || res.Max == nil) {
			return refusal(i, "9.5.1.0-3", "a raw score needs min and max")
		}
	}
	var success, completion *bool
	duration := ""
	if st.Result != nil {
		success, completion, duration = st.Result.Success, st.Result.Completion, st.Result.Duration
	}
	switch {
	case v == rollup.VerbPassed && (success == nil || !*success):
		return refusal(i, "9.5.2.0-1", "a passed statement must have result.success true")
	case v == rollup.VerbFailed && (success == nil || *success):
		return refusal(i, "9.5.2.0-2", "a failed statement must have result.success false")
	case !judged && success != nil:
		return refusal(i, "9.5.2.0-3", "only passed and failed statements may have result.success")
	case v == rollup.VerbCompleted && (completion == nil || !*completion):
		return refusal(i, "9.5.3.0-1", "a completed statement must have result.completion true")
	case v != rollup.VerbCompleted && completion != nil:
		return refusal(i, "9.5.3.0-2", "only completed statements may have result.completion")
	case v != rollup.VerbInitialized && duration == "":
		return refusal(i, "9.5.4.1-1", "a %s statement must have result.duration", v)
	}
	moveOn := st.category(CategoryMoveOn)
	if (success != nil || completion != nil) != moveOn {
		if moveOn {
			return refusal(i, "9.6.2.2-2", "only statements with result.success or result.completion carry the moveOn category")
		}
		return refusal(i, "9.6.2.2-1", "a statement with result.success or result.completion must carry the moveOn category")
	}
	if judged && c.MasteryScore != nil && res.Scaled != nil {
		// A judgement with a score is made on the masteryScore: it carries it (9.6.3.2-2).
		var ms float64
		if raw, ok := st.extension(ExtMasteryScore); !ok || json.Unmarshal(raw, &ms) != nil || ms != *c.MasteryScore {
			return refusal(i, "9.6.3.2-2", "a scored %s statement must carry the launch's masteryScore (%g) as extension", v, *c.MasteryScore)
		}
		if res.Scaled != nil && v == rollup.VerbPassed && *res.Scaled < *c.MasteryScore {
			return refusal(i, "9.3.4.0-2", "a passed score (%g) must reach the masteryScore %g", *res.Scaled, *c.MasteryScore)
		}
		if res.Scaled != nil && v == rollup.VerbFailed && *res.Scaled >= *c.MasteryScore {
			return refusal(i, "9.3.5.0-2", "a failed score (%g) must be below the masteryScore %g", *res.Scaled, *c.MasteryScore)
		}
	}
	sess.Verbs = append(sess.Verbs, v)
	switch v {
	case rollup.VerbCompleted:
		au.Completed = true
	case rollup.VerbPassed:
		au.Passed = true
	}
	return nil
}

// utcTimestamp reports whether an xAPI timestamp is in UTC (Z or a zero offset); an absent
// one is the record store's own, which is.
func utcTimestamp(ts string) bool {
	if ts == "" {
		return true
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return true // the xAPI validation has its say
	}
	_, off := t.Zone()
	return off == 0
}
