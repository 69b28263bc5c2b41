package blob_test

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/storage/blob"
)

func TestCleanKey(t *testing.T) {
	good := []string{
		"a",
		"tenant/course/v1/index.html",
		"a/.hidden",
		"a/..b",
		"a/b..",
		"a b/c d.html",
		"ünïcode/ファイル.txt",
		"a/.lectern", // only the full reserved prefix is reserved
		strings.Repeat("x", blob.MaxSegmentLength),
	}
	for _, k := range good {
		got, err := blob.CleanKey(k)
		if err != nil || got != k {
			t.Errorf("CleanKey(%q) = %q, %v; want it unchanged", k, got, err)
		}
	}
	bad := []string{
		"", "/", "/etc/passwd", "a/", "a//b", "./a", "a/./b", "a/.", "..", "../x", "a/../../x",
		"a\\..\\b", "a\\b", "a\x00b", "a\nb", "a\x7fb", "\xff", ".lectern-tmp-1", "a/.lectern-x/b",
		strings.Repeat("x", blob.MaxSegmentLength+1),
		strings.Repeat("abcdefg/", blob.MaxKeyLength/8) + "x",
	}
	for _, k := range bad {
		if got, err := blob.CleanKey(k); !errors.Is(err, blob.ErrInvalidKey) || got != "" {
			t.Errorf("CleanKey(%q) = %q, %v; want ErrInvalidKey", k, got, err)
		}
	}
}

func TestCleanPrefix(t *testing.T) {
	for _, p := range []string{"", "a", "a/", "a/b/", "a/b", "a/.", "a/..", "a/.lec"} {
		if got, err := blob.CleanPrefix(p); err != nil || got != p {
			t.Errorf("CleanPrefix(%q) = %q, %v; want it unchanged", p, got, err)
		}
	}
	for _, p := range []string{"/", "/a", "../", "../a", "a/../", "a//", "a//b", "./a/", "a\\b", "a\x00"} {
		if _, err := blob.CleanPrefix(p); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("CleanPrefix(%q) = %v; want ErrInvalidKey", p, err)
		}
	}
}

// FuzzCleanKey checks the property every backend relies on: an accepted key is relative, has
// no dot segments and no backslash, so joining it under a root directory stays inside it.
func FuzzCleanKey(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "a/../../x", "/etc/passwd", "a\\..\\b", "a//b", "a/./b", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got, err := blob.CleanKey(key)
		if err != nil {
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Fatalf("CleanKey(%q) error %v is not ErrInvalidKey", key, err)
			}
			return
		}
		if got != key {
			t.Fatalf("CleanKey(%q) rewrote the key to %q", key, got)
		}
		if path.Clean(key) != key || path.IsAbs(key) || strings.ContainsAny(key, "\\\x00") ||
			!strings.HasPrefix(path.Join("/root", key), "/root/") || slices.Contains(strings.Split(key, "/"), "..") {
			t.Fatalf("CleanKey accepted unsafe key %q", key)
		}
		if _, err := blob.CleanPrefix(key); err != nil {
			t.Fatalf("CleanPrefix refused the valid key %q: %v", key, err)
		}
	})
}
