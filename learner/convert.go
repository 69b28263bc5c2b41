package learner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/course/xapiconv"
	"github.com/lectern-lms/lectern/lrs/ingest"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The settings of SCORM to xAPI conversion (docs/decisions.md, "SCORM to xAPI conversion").
const (
	settingConvertRealtime = "ConvertTinCanFromScormRealtime"
	// SettingConvertHistorical switched on converts what is stored, as a job.
	SettingConvertHistorical = "ConvertTinCanFromScormHistorical"
)

// convertLoad is one SCO load to convert, with what the run-time record does not say.
type convertLoad struct {
	reg                 *registration.Registration
	in                  registration.Instance
	v                   *course.Version
	act                 *course.Activity
	rec                 *scormrt.Record
	resumed, terminated bool
	at                  time.Time
}

// convertStatements converts one load (course/xapiconv) and writes the statements.
func (s *Service) convertStatements(ctx context.Context, tenant string, l convertLoad, layers []settings.Layer) error {
	in := xapiconv.Input{Dialect: l.rec.Dialect, Values: l.rec.Values, Attempt: l.rec.Attempt,
		HomePage: s.LearnerHomePage(layers), LearnerID: l.reg.Learner.ID,
		LearnerName:  strings.TrimSpace(l.reg.Learner.FirstName + " " + l.reg.Learner.LastName),
		Registration: l.reg.XAPIRegistrationOf(l.in), CourseIRI: CourseActivityID(tenant, l.v), SCOID: l.rec.Activity,
		Resumed: l.resumed, Terminated: l.terminated, Timestamp: l.at}
	if l.v.Package != nil {
		in.CourseTitle = l.v.Package.Title
	}
	if l.act != nil {
		in.SCOTitle = l.act.Title
	}
	return s.writeConverted(ctx, tenant, xapiconv.Convert(in))
}

// writeConverted stores statements the server writes itself (not a client), with the LMS as
// authority, skipping ids already stored: that makes conversion idempotent whatever the
// timestamps of a rerun. It is the one place converted statements enter the record store.
func (s *Service) writeConverted(ctx context.Context, tenant string, sts []xapiconv.Statement) error {
	authority, err := s.lmsAuthority()
	if err != nil {
		return err
	}
	var opts []ingest.Option
	if s.d.StatementsCounted != nil {
		opts = append(opts, ingest.OnStored(s.d.StatementsCounted))
	}
	w := ingest.New(s.d.Statements, s.log, opts...)
	for try := 0; ; try++ {
		var fresh []xapiconv.Statement
		for _, st := range sts {
			_, err := s.d.Statements.Get(ctx, tenant, st.ID())
			if err == nil {
				continue
			}
			if !errors.Is(err, statements.ErrNotFound) {
				return err
			}
			fresh = append(fresh, st)
		}
		if len(fresh) == 0 {
			return nil
		}
		body, err := json.Marshal(fresh)
		if err != nil {
			return err
		}
		// The statement-write use case every client write goes through (lrs/ingest).
		res, err := w.Write(ctx, ingest.Request{Tenant: tenant, Version: xapi.V103, Authority: authority,
			ContentType: "application/json", Body: body, Define: true})
		if errors.Is(err, statements.ErrConflict) && try < 2 {
			// Another writer (the realtime path and the job) stored one of the ids meanwhile.
			continue
		}
		if err != nil {
			return fmt.Errorf("converted statements: %w", err)
		}
		if s.d.Stored != nil {
			s.d.Stored(ctx, tenant, res.Batch)
		}
		return nil
	}
}

// convertsRealtime reports whether ConvertTinCanFromScormRealtime is on in a registration's
// cascade (layers; nil when they could not be read: no conversion then).
func (s *Service) convertsRealtime(layers []settings.Layer) bool {
	if layers == nil {
		return false
	}
	on, err := s.d.Settings.Catalogue().Resolve(settingConvertRealtime, layers...)
	return err == nil && on == "true"
}

// convertCommit converts a stored commit in real time. before is the activity's record as it
// was before the commit (nil for the first): a newer load that follows a suspended one is a
// resumption. Failures are logged; the commit is durable already, and the historical job or
// the next commit of the load writes what is missing.
func (s *Service) convertCommit(ctx context.Context, tenant string, reg *registration.Registration, in registration.Instance, v *course.Version, act *course.Activity,
	before, after *scormrt.Record, exit bool, layers []settings.Layer) {
	resumed := before != nil && before.Attempt != after.Attempt && before.Values[suspendExit(before.Dialect)] == "suspend"
	l := convertLoad{reg: reg, in: in, v: v, act: act, rec: after, resumed: resumed, terminated: exit, at: time.Now()}
	if err := s.convertStatements(ctx, tenant, l, layers); err != nil {
		s.log.Warn("SCORM to xAPI conversion failed", "tenant", tenant, "registration", reg.ID, "activity", act.ID, "error", err)
	}
}

func suspendExit(d scormrt.Dialect) string {
	if d == scormrt.SCORM12 {
		return "cmi.core.exit"
	}
	return "cmi.exit"
}

// ConvertTenant converts the stored run-time data of every SCORM registration instance of
// the tenant, each SCO's latest load taken as ended (terminated) at the record's last
// update. It does nothing when ConvertTinCanFromScormHistorical is off by the time it runs.
// Statement ids are deterministic and stored ids are skipped, so a rerun, or a load the
// realtime path converted already, adds nothing twice.
func (s *Service) ConvertTenant(ctx context.Context, tenant string) error {
	tl, err := s.d.Settings.TenantLayer(ctx, tenant)
	if err != nil {
		return err
	}
	if on, err := s.d.Settings.Catalogue().Resolve(SettingConvertHistorical, tl); err != nil || on != "true" {
		return err
	}
	q := registration.ListQuery{Limit: 100}
	for {
		page, err := s.d.Registrations.List(ctx, tenant, q)
		if err != nil {
			return err
		}
		for _, reg := range page.Registrations {
			if err := s.convertRegistration(ctx, tenant, reg); err != nil {
				return fmt.Errorf("registration %s: %w", reg.ID, err)
			}
		}
		if page.Next == "" {
			return nil
		}
		q.Cursor = page.Next
	}
}

func (s *Service) convertRegistration(ctx context.Context, tenant string, reg *registration.Registration) error {
	var layers []settings.Layer
	for _, in := range reg.Instances {
		// AICC stores CMI run-time data too (HACP, in the SCORM 1.2 model), and the realtime
		// path converts it: so does the job.
		std := course.Standard(in.Course.Standard)
		if _, ok := scormrt.DialectOf(std); !ok && std != course.AICC {
			continue
		}
		recs, err := s.d.Runtime.List(ctx, tenant, reg.ID, in.Key)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			continue
		}
		v, err := s.d.Courses.Version(ctx, tenant, reg.CourseID, in.CourseVersion)
		if errors.Is(err, course.ErrCourseNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if layers == nil {
			if layers, err = s.RegistrationLayers(ctx, tenant, reg); err != nil {
				return err
			}
		}
		for _, rec := range recs {
			var act *course.Activity
			if v.Package != nil {
				for _, a := range v.Package.Launchable() {
					if a.ID == rec.Activity {
						act = a
					}
				}
			}
			l := convertLoad{reg: reg, in: in, v: v, act: act, rec: rec, terminated: true, at: rec.Updated}
			if err := s.convertStatements(ctx, tenant, l, layers); err != nil {
				return err
			}
		}
	}
	return nil
}
