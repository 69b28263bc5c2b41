package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lectern-lms/lectern/storage/record"
)

// KindRuntime is the record kind of an activity's run-time data in one registration instance:
// id "<registration id>/<instance key>/<activity id>", parent the registration (deleting or
// resetting it removes the data), key the instance key (List reads one instance's records).
const KindRuntime = "registration_runtime"

// kindRegistration is registration.KindRegistration (not imported: registration builds the
// progress detail from this package).
const kindRegistration = "registration"

// ErrStale means a commit is older than, or the same as, the one already stored.
var ErrStale = errors.New("stale commit")

// Record is the stored run-time data of one activity (SCO) in one registration instance.
type Record struct {
	Activity string  `json:"activity"`
	Dialect  Dialect `json:"dialect"`
	// Attempt and Sequence order commits: Attempt names the SCO load the player got from
	// NewAttempt, Sequence is the API's commit counter within that load. A commit is stored
	// only when (Attempt, Sequence) is greater than the stored pair.
	Attempt  int64  `json:"attempt"`
	Sequence int64  `json:"sequence"`
	Values   Values `json:"values"`
	// Commits counts the stored commits.
	Commits int `json:"commits"`
	// HACP is the AU session the latest AICC PutParam belonged to (nil for SCORM).
	HACP *HACPSession `json:"hacp,omitempty"`
	// Completed: an earlier attempt of the activity (one a later load started afresh, see
	// StartsAfresh) was completed. A completed SCO re-entered keeps its completion: StateOf
	// reads it completed until the new attempt says so itself.
	Completed bool      `json:"completed,omitempty"`
	Updated   time.Time `json:"-"`
}

// HACPSession is an AICC AU session as the store follows it: the total time before it, the
// running time its latest PutParam reported, and whether it is still open.
type HACPSession struct {
	Session string  `json:"session"`
	Before  float64 `json:"before"`
	Latest  float64 `json:"latest"`
	Open    bool    `json:"open"`
}

// hacpTotal applies a PutParam's running time t to rt and returns the activity's new total
// time in seconds. An AU session ends at ExitAU (EndHACP), when the player session changes,
// or when the running time goes back (the AU was loaded again without ExitAU); the next
// PutParam then starts a new one on top of the stored total.
func (rt *Record) hacpTotal(t *HACPTime) float64 {
	cur := rt.HACP
	if cur == nil || !cur.Open || cur.Session != t.Session || t.Seconds < cur.Latest {
		cur = &HACPSession{Session: t.Session, Before: TimespanSeconds(rt.Values["cmi.core.total_time"]), Open: true}
	}
	cur.Latest = t.Seconds
	rt.HACP = cur
	return cur.Before + cur.Latest
}

// Store keeps run-time records in the record store.
type Store struct {
	records record.Store
	now     func() time.Time
}

// NewStore returns a run-time store over records.
func NewStore(records record.Store) *Store { return &Store{records: records, now: time.Now} }

func recordID(regID, instanceKey, activity string) string {
	// The instance key is a fixed-length UUID, so the id is injective whatever the ids hold.
	return regID + "/" + instanceKey + "/" + activity
}

func decode(r *record.Record) (*Record, error) {
	values := make(Values, len(r.Data)/40)
	rt, err := decodeWith(r, func(k, v string) { values[k] = v }, func() { clear(values) })
	if err != nil {
		return nil, err
	}
	rt.Values = values
	return rt, nil
}

// Get returns an activity's run-time record, or nil when nothing was committed yet.
func (s *Store) Get(ctx context.Context, tenant, regID, instanceKey, activity string) (*Record, error) {
	r, err := s.records.Get(ctx, tenant, KindRuntime, recordID(regID, instanceKey, activity))
	if errors.Is(err, record.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(r)
}

// List returns every run-time record of one registration instance, by activity id. A known
// record (the one a commit just stored) stands in for its stored form while that is
// unchanged (same Updated), so a large record is not decoded again right after it was
// written.
func (s *Store) List(ctx context.Context, tenant, regID, instanceKey string, known ...*Record) (map[string]*Record, error) {
	rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindRuntime, Key: instanceKey,
		Parent: &record.Ref{Kind: kindRegistration, ID: regID}})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Record, len(rs))
	for _, r := range rs {
		if k := knownRecord(known, r, regID, instanceKey); k != nil {
			out[k.Activity] = k
			continue
		}
		rt, err := decode(r)
		if err != nil {
			return nil, err
		}
		out[rt.Activity] = rt
	}
	return out, nil
}

// knownRecord is the record of known that r stores, unchanged since; nil when none is.
func knownRecord(known []*Record, r *record.Record, regID, instanceKey string) *Record {
	for _, k := range known {
		if k != nil && r.ID == recordID(regID, instanceKey, k.Activity) && r.Updated.Equal(k.Updated) {
			return k
		}
	}
	return nil
}

// NewAttempt returns the attempt number of a new SCO load: the clock in nanoseconds, so a
// later load orders after every earlier one of any server with a sane clock.
func (s *Store) NewAttempt() int64 { return s.now().UnixNano() }

// Commit stores c for one activity of a registration instance: the committed values are laid
// over the stored ones (the API sends the full data model, so this only keeps elements a
// commit left out), except that the first commit of a newer attempt replaces them when
// c.Reset says that load started afresh (StartsAfresh). ErrStale when (attempt, c.Sequence) is not greater than the stored pair;
// record.ErrNotFound when the registration is gone. A nil error means the data is durable.
// The returned record's values are c.Values, completed: c is the store's once committed.
func (s *Store) Commit(ctx context.Context, tenant, regID, instanceKey, activity string, d Dialect, attempt int64, c *Commit) (*Record, error) {
	id := recordID(regID, instanceKey, activity)
	// apply lays c over rt, whose Values hold only the stored elements c left out and those
	// the rules below read (storedUnder): a commit usually carries the whole data model, so
	// the record's values are c's, with what it left out (under) and what the store sets
	// itself (set) added once stored. Nothing here changes c, which a retry applies again.
	apply := func(rt *Record) (under, set Values, err error) {
		if attempt < rt.Attempt || (attempt == rt.Attempt && c.Sequence <= rt.Sequence) {
			return nil, nil, fmt.Errorf("%w: commit %d of attempt %d, stored %d of attempt %d", ErrStale, c.Sequence, attempt, rt.Sequence, rt.Attempt)
		}
		under = rt.Values
		if attempt > rt.Attempt && rt.Attempt != 0 && StartsAfresh(c.Reset, d, rt) {
			// The first commit of a load that started a new attempt: the earlier attempt's
			// data is not carried over (the load got none of it either), but its completion
			// is.
			rt.Completed = rt.Completed || rt.completedNow()
			under = nil
		}
		rt.Attempt, rt.Sequence, rt.Dialect = attempt, c.Sequence, d
		get := func(k string) string {
			if v, ok := c.Values[k]; ok {
				return v
			}
			return under[k]
		}
		set = Values{}
		if st := get("cmi.core.lesson_status"); c.Finish12 && (st == "" || st == "not attempted") {
			set["cmi.core.lesson_status"] = "completed"
		}
		if c.HACP != nil {
			rt.Values = Values{"cmi.core.total_time": get("cmi.core.total_time")}
			set["cmi.core.total_time"] = Timespan(rt.hacpTotal(c.HACP))
		}
		rt.Commits++
		return under, set, nil
	}
	// done makes rt the record as stored: c's values with under beneath and set above them.
	done := func(rt *Record, under, set Values, updated time.Time) *Record {
		values := c.Values
		if values == nil {
			values = Values{}
		}
		for k, v := range under {
			if _, ok := values[k]; !ok {
				values[k] = v
			}
		}
		for k, v := range set {
			values[k] = v
		}
		rt.Values, rt.Updated = values, updated
		return rt
	}
	for try := 0; try < 3; try++ {
		// The record as applied is the answer: decoding what was just encoded would double
		// the cost of a large commit.
		var applied *Record
		var under, set Values
		r, err := record.Modify(ctx, s.records, tenant, KindRuntime, id, func(r *record.Record) error {
			rt, err := s.storedUnder(r, c)
			if err != nil {
				return err
			}
			if under, set, err = apply(rt); err != nil {
				return err
			}
			applied = rt
			r.Data, err = encodeCommit(rt, under, c, set)
			return err
		})
		if err == nil {
			return done(applied, under, set, r.Updated), nil
		}
		if !errors.Is(err, record.ErrNotFound) {
			return nil, err
		}
		rt := &Record{Activity: activity, Values: Values{}}
		if under, set, err = apply(rt); err != nil {
			return nil, err
		}
		data, err := encodeCommit(rt, under, c, set)
		if err != nil {
			return nil, err
		}
		nr := &record.Record{Tenant: tenant, Kind: KindRuntime, ID: id, Key: instanceKey,
			Parent: &record.Ref{Kind: kindRegistration, ID: regID}, Data: data}
		err = s.records.Create(ctx, nr)
		if err == nil {
			return done(rt, under, set, nr.Updated), nil
		}
		if !errors.Is(err, record.ErrConflict) {
			return nil, err
		}
		// A concurrent first commit created it: apply on top of that one.
	}
	return nil, fmt.Errorf("runtime %q: too many concurrent first commits", id)
}

// readBeforeCommit are the stored elements a commit's rules read (StartsAfresh,
// completedNow, lesson_status at finish, hacpTotal) whether or not the commit carries them.
var readBeforeCommit = map[string]bool{"cmi.exit": true, "cmi.core.exit": true, "cmi.completion_status": true,
	"cmi.core.lesson_status": true, "cmi.core.total_time": true}

// storedUnder decodes a stored record for commit c: its Values are only the stored elements
// c leaves out and those readBeforeCommit names, which is all a commit needs of them; the
// others, about all of a large record, are not copied into a map. The stored elements are
// usually met in the order of c's body (encodeCommit stored the previous commit so), which
// tells that c has them without looking each up in c.Values.
func (s *Store) storedUnder(r *record.Record, c *Commit) (*Record, error) {
	under := Values{}
	order, next := c.inOrder(), 0
	inCommit := func(k string) bool {
		// The next few elements of the body, for the elements a commit adds or leaves out.
		for j := next; j < len(order) && j < next+4; j++ {
			if order[j].name == k {
				next = j + 1
				return true
			}
		}
		_, ok := c.Values[k]
		return ok
	}
	rt, err := decodeWith(r, func(k, v string) {
		if !inCommit(k) || readBeforeCommit[k] {
			under[k] = v
		}
	}, func() { clear(under) })
	if err != nil {
		return nil, err
	}
	rt.Values = under
	return rt, nil
}

// EndHACP ends the open AICC AU session of an activity (ExitAU), so the next PutParam's
// time adds to the total instead of replacing this session's. Nothing stored: nothing to end.
func (s *Store) EndHACP(ctx context.Context, tenant, regID, instanceKey, activity string) error {
	_, err := record.Modify(ctx, s.records, tenant, KindRuntime, recordID(regID, instanceKey, activity), func(r *record.Record) error {
		rt, err := decode(r)
		if err != nil {
			return err
		}
		if rt.HACP == nil || !rt.HACP.Open {
			return errNothingToEnd
		}
		rt.HACP.Open = false
		r.Data, err = encode(rt)
		return err
	})
	if errors.Is(err, record.ErrNotFound) || errors.Is(err, errNothingToEnd) {
		return nil
	}
	return err
}

var errNothingToEnd = errors.New("no open AU session")

// DeleteInstance removes the run-time records, the shared data stores and the sequencing
// state of one registration instance (after a reset).
// Records left by a crash in between are never read: the fresh instance has a new key.
func (s *Store) DeleteInstance(ctx context.Context, tenant, regID, instanceKey string) error {
	rs, err := record.All(ctx, s.records, record.Query{Tenant: tenant, Kind: KindRuntime, Key: instanceKey,
		Parent: &record.Ref{Kind: kindRegistration, ID: regID}})
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := s.records.Delete(ctx, tenant, KindRuntime, r.ID); err != nil && !errors.Is(err, record.ErrNotFound) {
			return err
		}
	}
	if err := s.deleteShared(ctx, tenant, regID, instanceKey); err != nil {
		return err
	}
	return s.deleteSequencing(ctx, tenant, regID, instanceKey)
}
