package player_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/course/coursetest"
)

// manifestSharedData is a SCORM 2004 course of two SCOs that map shared data store t: w
// may read and write it, r only read it (writeSharedData false); extra is the
// organization's attributes.
func manifestSharedData(extra string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="sd" version="1" ` + coursetest.NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="o"><organization identifier="o" ` + extra + `><title>Shared data</title>
    <item identifier="w" identifierref="r1"><title>W</title>
      <adlcp:data><adlcp:map targetID="t"/><adlcp:map targetID="u"/></adlcp:data>
    </item>
    <item identifier="r" identifierref="r1"><title>R</title>
      <adlcp:data><adlcp:map targetID="t" writeSharedData="false"/></adlcp:data>
    </item>
    <imsss:sequencing><imsss:controlMode choice="true" flow="true"/></imsss:sequencing>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="sco.html"><file href="sco.html"/></resource></resources>
</manifest>`
}

// sharedState is what an activity load gets of shared data.
type sharedState struct {
	Attempt        int64
	SharedDataMaps []struct {
		TargetID                        string
		ReadSharedData, WriteSharedData bool
	}
	SharedData map[string]string
}

func loadShared(e *servertest.Env, session, activity string) sharedState {
	e.T.Helper()
	r := e.Get("/player/runtime/" + session + "/activity?activity=" + activity)
	e.Expect(r, 200, "activity state of "+activity)
	var st sharedState
	r.JSON(e.T, &st)
	return st
}

// TestSharedDataAcrossSCOs (SCORM 2004 4th edition adl.data): what one SCO writes to a
// shared data store the next SCO that maps it reads, in the same course and, the package's
// sharedDataGlobalToSystem being true by default, in the learner's other courses; another
// learner reads nothing, a SCO that may only read the store cannot write it (404), and a
// store written empty is uninitialized again.
func TestSharedDataAcrossSCOs(t *testing.T) {
	servertest.ForEachMode(t, func(t *testing.T, e *servertest.Env) {
		e.CreateTenant("acme", true)
		sco := "<html>sco</html>"
		e.ImportOK("acme", "sd", servertest.ZipOf(t, map[string]string{"imsmanifest.xml": manifestSharedData(""), "sco.html": sco}), "")
		regs := "/engine/api/v1/acme/registrations"
		register := func(id, learner string) string {
			e.Expect(e.Do("POST", regs, servertest.Root, map[string]any{"courseId": "sd", "registrationId": id,
				"learner": map[string]any{"id": learner, "firstName": "A", "lastName": "B"}}), 204, "create "+id)
			return e.Launch(e.LaunchPath(regs + "/" + id + "/launchLink"))
		}
		commit := func(session, activity string, attempt int64, body string) servertest.Resp {
			return e.Do("POST", fmt.Sprintf("/player/runtime/%s/commit?activity=%s&attempt=%d&terminate=true", session, activity, attempt),
				servertest.NoAuth, body, "Content-Type", "text/plain;charset=UTF-8")
		}

		ann := register("ann-1", "ann")
		if n := playerNav(e, ann); n.Deliver != "w" {
			t.Fatalf("delivers %q", n.Deliver)
		}
		w := loadShared(e, ann, "w")
		if len(w.SharedDataMaps) != 2 || w.SharedDataMaps[0].TargetID != "t" || !w.SharedDataMaps[0].ReadSharedData ||
			!w.SharedDataMaps[0].WriteSharedData || len(w.SharedData) != 0 {
			t.Fatalf("first load of w: %+v", w)
		}
		r := commit(ann, "w", w.Attempt, `{"commitSequence":1,"adl.data.0.id":"t","adl.data.0.store":"from w","adl.data.1.id":"u","adl.data.1.store":"u1","adl.nav.request":"continue"}`)
		e.Expect(r, 200, "w's commit")

		rd := loadShared(e, ann, "r")
		if len(rd.SharedDataMaps) != 1 || rd.SharedDataMaps[0].WriteSharedData || !reflect.DeepEqual(rd.SharedData, map[string]string{"t": "from w"}) {
			t.Fatalf("r reads %+v, want store t as w wrote it and no other", rd)
		}
		r = commit(ann, "r", rd.Attempt, `{"commitSequence":1,"adl.data.0.id":"t","adl.data.0.store":"from r"}`)
		var refused struct{ ErrorCode int }
		r.JSON(t, &refused)
		if r.Status != 400 || refused.ErrorCode != 404 {
			t.Fatalf("r's write of a store it may only read: %d %s", r.Status, r.Body)
		}

		// The learner's other registration reads the learner's stores; another learner's none.
		ann2 := register("ann-2", "ann")
		playerNav(e, ann2)
		if got := loadShared(e, ann2, "w").SharedData; !reflect.DeepEqual(got, map[string]string{"t": "from w", "u": "u1"}) {
			t.Fatalf("ann's other registration reads %v", got)
		}
		bob := register("bob-1", "bob")
		playerNav(e, bob)
		if got := loadShared(e, bob, "w").SharedData; len(got) != 0 {
			t.Fatalf("another learner reads %v", got)
		}

		// Written empty, the store is uninitialized again.
		w2 := loadShared(e, ann2, "w")
		e.Expect(commit(ann2, "w", w2.Attempt, `{"commitSequence":1,"adl.data.0.id":"t","adl.data.0.store":""}`), 200, "w's commit of an empty store")
		if got := loadShared(e, ann, "r").SharedData; len(got) != 0 {
			t.Fatalf("after t was written empty, r reads %v", got)
		}
	})
}
