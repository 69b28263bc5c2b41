package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/storage/record"
)

// SCORM 2004 codes of shared data access (RTE 4.2, adl.data.n.store).
const (
	// CodeNotInitialized2004 is a GetValue of a store nothing was written to (403).
	CodeNotInitialized2004 = 403
	// CodeReadOnly2004 is a SetValue of a store the activity may only read (404).
	CodeReadOnly2004 = 404
	// CodeWriteOnly2004 is a GetValue of a store the activity may only write (405).
	CodeWriteOnly2004 = 405
)

// MaxSharedStore is the smallest permitted maximum of adl.data.n.store (SPM 64000
// characters), which the player's runtime enforces and the store keeps.
const MaxSharedStore = 64000

// SharedMap is one adlcp:map of an activity with the CAM's defaults applied (both
// readSharedData and writeSharedData are true when absent): the shared data store the
// activity's SCO sees as adl.data.n, n being the map's position.
type SharedMap struct {
	TargetID string `json:"targetID"`
	Read     bool   `json:"readSharedData"`
	Write    bool   `json:"writeSharedData"`
}

// SharedMaps returns act's adlcp:data maps in manifest order, defaults applied; a map
// without a target, or naming one an earlier map named, is left out (adl.data.n.id is
// unique within the activity).
func SharedMaps(act *course.Activity) []SharedMap {
	if act == nil {
		return nil
	}
	var out []SharedMap
	seen := map[string]bool{}
	for _, m := range act.SharedData {
		if m.TargetID == "" || seen[m.TargetID] {
			continue
		}
		seen[m.TargetID] = true
		out = append(out, SharedMap{TargetID: m.TargetID, Read: m.ReadSharedData == nil || *m.ReadSharedData,
			Write: m.WriteSharedData == nil || *m.WriteSharedData})
	}
	return out
}

// SharedDataGlobal reports pkg's adlcp:sharedDataGlobalToSystem: true (the default) when its
// stores are the learner's across every course, false when they belong to one attempt on
// the course.
func SharedDataGlobal(pkg *course.Package) bool {
	if pkg == nil || pkg.Root == nil || pkg.Root.Extra == nil || pkg.Root.Extra.SharedDataGlobalToSystem == nil {
		return true
	}
	return *pkg.Root.Extra.SharedDataGlobalToSystem
}

// SharedStores are shared data stores by target id. A store that was never written, or was
// written empty, is absent: GetValue of it is "" with 403 (not initialized), as ADL's
// reference LMS answers (ADL DDM reads 403 after the SCO stored "").
type SharedStores map[string]string

// SharedWrite is one store a commit writes: adl.data.n.id and adl.data.n.store.
type SharedWrite struct {
	TargetID string
	Store    string
}

// sharedElement splits adl.data.n.id / adl.data.n.store into n and the field; ok false for
// any other name.
func sharedElement(name string) (n int, field string, ok bool) {
	rest, found := strings.CutPrefix(name, "adl.data.")
	if !found {
		return 0, "", false
	}
	idx, field, found := strings.Cut(rest, ".")
	if !found || (field != "id" && field != "store") {
		return 0, "", false
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || n > 9999 || strconv.Itoa(n) != idx {
		return 0, "", false
	}
	return n, field, true
}

// takeSharedWrites moves the adl.data elements of flattened commit values into writes,
// ordered by n. adl.data._count and the like are the API's own and dropped. A store without
// its id, an element adl.data does not define, or a store longer than the SPM is an *Error.
func takeSharedWrites(flat map[string]string) ([]SharedWrite, error) {
	type pair struct {
		id, store       string
		hasID, hasStore bool
	}
	var pairs map[int]*pair
	for k, v := range flat {
		if !strings.HasPrefix(k, "adl.data.") {
			continue
		}
		delete(flat, k)
		n, field, ok := sharedElement(k)
		if !ok {
			if k == "adl.data._count" || k == "adl.data._children" {
				continue
			}
			return nil, &Error{Code: CodeUndefined, Element: k, Message: "is not an element of adl.data"}
		}
		if pairs == nil {
			pairs = map[int]*pair{}
		}
		p := pairs[n]
		if p == nil {
			p = &pair{}
			pairs[n] = p
		}
		if field == "id" {
			p.id, p.hasID = v, true
		} else {
			p.store, p.hasStore = v, true
		}
	}
	ns := make([]int, 0, len(pairs))
	for n := range pairs {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	var out []SharedWrite
	for _, n := range ns {
		p := pairs[n]
		el := "adl.data." + strconv.Itoa(n) + ".store"
		if !p.hasStore {
			continue // the id alone writes nothing
		}
		if !p.hasID || p.id == "" {
			return nil, &Error{Code: CodeGeneral, Element: el, Message: "comes without adl.data." + strconv.Itoa(n) + ".id"}
		}
		if !utf8.ValidString(p.store) {
			return nil, &Error{Code: CodeType2004, Element: el, Message: "value is not valid UTF-8"}
		}
		if c := utf8.RuneCountInString(p.store); c > MaxSharedStore {
			return nil, &Error{Code: CodeRange2004, Element: el, Message: fmt.Sprintf("value of %d characters is longer than %d", c, MaxSharedStore)}
		}
		out = append(out, SharedWrite{TargetID: p.id, Store: p.store})
	}
	return out, nil
}

// CheckSharedWrites refuses a commit's shared data writes that act's maps do not allow: a
// store the activity does not map (401), or maps without writeSharedData (404, read only).
// The player's runtime refuses such a SetValue already; this keeps a client that does not
// from writing another activity's data.
func CheckSharedWrites(act *course.Activity, c *Commit) error {
	if len(c.SharedData) == 0 {
		return nil
	}
	maps := SharedMaps(act)
	for _, w := range c.SharedData {
		i := sharedIndex(maps, w.TargetID)
		if i < 0 {
			return &Error{Code: CodeUndefined, Element: "adl.data", Message: fmt.Sprintf("activity %q maps no shared data store %q", act.ID, w.TargetID)}
		}
		if !maps[i].Write {
			return &Error{Code: CodeReadOnly2004, Element: "adl.data." + strconv.Itoa(i) + ".store",
				Message: fmt.Sprintf("activity %q may only read shared data store %q (writeSharedData false)", act.ID, w.TargetID)}
		}
	}
	return nil
}

func sharedIndex(maps []SharedMap, id string) int {
	for i, m := range maps {
		if m.TargetID == id {
			return i
		}
	}
	return -1
}

// KindLearnerSharedData is the record kind of a learner's shared data stores across courses
// (SCORM 2004 4th edition adl.data of packages whose sharedDataGlobalToSystem is true, the
// default): id the learner id, data the stores as JSON. Like KindLearnerObjectives it
// belongs to no registration.
const KindLearnerSharedData = "learner_shared_data"

// KindSharedData is the record kind of the shared data stores of one registration instance
// whose package's sharedDataGlobalToSystem is false: id "<registration id>/<instance key>",
// parent the registration, key the instance key. It holds the stores of one attempt on the
// course (SharedScope.Attempt); a later attempt reads none of them.
const KindSharedData = "registration_shared_data"

// SharedScope says whose stores an activity reads and writes: the learner's (Learner set)
// or those of one attempt (Attempt, the root activity's attempt count) on one registration
// instance.
type SharedScope struct {
	Learner                string
	Registration, Instance string
	Attempt                int
}

// sharedRecord is the data of a shared data record.
type sharedRecord struct {
	Attempt int               `json:"attempt,omitempty"`
	Stores  map[string]string `json:"stores"`
}

func (sc SharedScope) at(tenant string) *record.Record {
	if sc.Learner != "" {
		return &record.Record{Tenant: tenant, Kind: KindLearnerSharedData, ID: sc.Learner, Key: sc.Learner}
	}
	return &record.Record{Tenant: tenant, Kind: KindSharedData, ID: sc.Registration + "/" + sc.Instance, Key: sc.Instance,
		Parent: &record.Ref{Kind: kindRegistration, ID: sc.Registration}}
}

// decodeShared reads a shared data record of scope sc: the stores of another attempt than
// sc's are none.
func decodeShared(sc SharedScope, data []byte) (sharedRecord, error) {
	r := sharedRecord{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &r); err != nil {
			return r, fmt.Errorf("shared data: %w", err)
		}
	}
	if r.Stores == nil || (sc.Learner == "" && r.Attempt != sc.Attempt) {
		r.Stores = map[string]string{}
	}
	r.Attempt = sc.Attempt
	if sc.Learner != "" {
		r.Attempt = 0
	}
	return r, nil
}

// ReadShared returns the stores of scope sc among ids (the targets an activity maps; the
// others are not its to see).
func (s *Store) ReadShared(ctx context.Context, tenant string, sc SharedScope, ids []string) (SharedStores, error) {
	at := sc.at(tenant)
	r, err := s.records.Get(ctx, tenant, at.Kind, at.ID)
	if errors.Is(err, record.ErrNotFound) {
		return SharedStores{}, nil
	}
	if err != nil {
		return nil, err
	}
	sr, err := decodeShared(sc, r.Data)
	if err != nil {
		return nil, err
	}
	out := SharedStores{}
	for _, id := range ids {
		if v, ok := sr.Stores[id]; ok {
			out[id] = v
		}
	}
	return out, nil
}

// WriteShared stores writes in scope sc, in order, with compare-and-set; a store written
// empty is removed (not initialized again). A nil error means the writes are durable.
func (s *Store) WriteShared(ctx context.Context, tenant string, sc SharedScope, writes []SharedWrite) error {
	if len(writes) == 0 {
		return nil
	}
	return s.upsert(ctx, sc.at(tenant), func(old json.RawMessage) (json.RawMessage, error) {
		sr, err := decodeShared(sc, old)
		if err != nil {
			return nil, err
		}
		for _, w := range writes {
			if w.Store == "" {
				delete(sr.Stores, w.TargetID)
			} else {
				sr.Stores[w.TargetID] = w.Store
			}
		}
		data, err := json.Marshal(sr)
		if err != nil || string(data) == string(old) {
			return nil, err
		}
		return data, nil
	})
}

// deleteShared removes the shared data stores of one registration instance (its attempts'
// stores; the learner's are not the instance's).
func (s *Store) deleteShared(ctx context.Context, tenant, regID, instanceKey string) error {
	err := s.records.Delete(ctx, tenant, KindSharedData, regID+"/"+instanceKey)
	if errors.Is(err, record.ErrNotFound) {
		return nil
	}
	return err
}
