package lrsapi_test

import (
	"testing"

	"github.com/lectern-lms/lectern/server"
)

func TestParseLRSAccounts(t *testing.T) {
	got, err := server.ParseLRSAccounts("viewer:pw:readonly, app:p:w:d:rw\n\nkim:x:person,admin:s3:root")
	if err != nil {
		t.Fatal(err)
	}
	want := []server.LRSAccount{{User: "viewer", Password: "pw", Level: server.LRSReadOnly},
		{User: "app", Password: "p:w:d", Level: server.LRSReadWrite},
		{User: "kim", Password: "x", Level: server.LRSPerson}, {User: "admin", Password: "s3", Level: server.LRSRoot}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"nolevel", "user:pass", "user:pass:superuser", ":pass:root", "admin::root"} {
		if _, err := server.ParseLRSAccounts(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
