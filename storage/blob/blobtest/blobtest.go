// Package blobtest is the contract suite every blob.Store backend must pass. A backend's
// test calls Run with a function that opens a fresh, empty store; the suite is the
// definition of the port's behaviour, so a case that one backend cannot pass is a change to
// the port, not a skip.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/storage/blob"
)

// bigSize is just over 16 MiB, the part size where S3 clients switch to multipart uploads,
// so the large round trip covers both the single- and the multi-part path.
const bigSize = 17 << 20

// Run runs the contract suite. open must return a new, empty store for every call (each
// subtest opens its own) and arrange its cleanup with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) blob.Store) {
	t.Run("RoundTripLarge", func(t *testing.T) { testRoundTripLarge(t, open(t)) })
	t.Run("RoundTripSmall", func(t *testing.T) { testRoundTripSmall(t, open(t)) })
	t.Run("GetRange", func(t *testing.T) { testGetRange(t, open(t)) })
	t.Run("List", func(t *testing.T) { testList(t, open(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open(t)) })
	t.Run("DeletePrefix", func(t *testing.T) { testDeletePrefix(t, open(t)) })
	t.Run("Overwrite", func(t *testing.T) { testOverwrite(t, open(t)) })
	t.Run("SizeMismatch", func(t *testing.T) { testSizeMismatch(t, open(t)) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, open(t)) })
	t.Run("HostileKeys", func(t *testing.T) { testHostileKeys(t, open(t)) })
	t.Run("KeyAndPrefixConflict", func(t *testing.T) { testKeyAndPrefixConflict(t, open(t)) })
	t.Run("ConcurrentPuts", func(t *testing.T) { testConcurrentPuts(t, open(t)) })
}

// HostileKeys are keys every backend must refuse with blob.ErrInvalidKey without touching
// storage. Backend tests may reuse them for backend-specific checks.
var HostileKeys = []string{
	"",
	"/",
	"../x",
	"..",
	"a/../../x",
	"a/..",
	"/etc/passwd",
	"a\\..\\b",
	"..\\x",
	"a//b",
	"a/./b",
	"./a",
	"a/",
	"a\x00b",
	"a/b\x00/../c",
	"\x00",
	".lectern-tmp-x",
}

// HostilePrefixes are prefixes List and DeletePrefix must refuse with blob.ErrInvalidKey.
var HostilePrefixes = []string{"/", "/etc/", "../", "../x", "a/../../", "a//", "a\\..\\", "a\x00/"}

func testRoundTripLarge(t *testing.T, s blob.Store) {
	ctx := t.Context()
	data := randomBytes(1, bigSize)
	want := sha256.Sum256(data)
	for _, tc := range []struct {
		key  string
		size int64
	}{
		{"big/known-size.bin", int64(len(data))},
		{"big/unknown-size.bin", -1},
	} {
		// onlyReader hides bytes.Reader's Seek/ReadAt/WriteTo, as a network body would.
		info, err := s.Put(ctx, tc.key, onlyReader{bytes.NewReader(data)}, tc.size)
		if err != nil {
			t.Fatalf("Put(%s, size %d): %v", tc.key, tc.size, err)
		}
		checkInfo(t, "Put", info, tc.key, int64(len(data)))

		rc, got, err := s.Get(ctx, tc.key)
		if err != nil {
			t.Fatalf("Get(%s): %v", tc.key, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, rc)
		closeOK(t, rc)
		if err != nil {
			t.Fatalf("reading %s: %v", tc.key, err)
		}
		if n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) {
			t.Fatalf("%s: read %d bytes with a different SHA-256; want %d bytes", tc.key, n, len(data))
		}
		checkInfo(t, "Get", got, tc.key, int64(len(data)))
		if got.ETag != info.ETag {
			t.Errorf("%s: Get ETag %q != Put ETag %q", tc.key, got.ETag, info.ETag)
		}

		// A range across the 16 MiB boundary, where multipart uploads join their parts.
		off := int64(16<<20) - 1000
		rc, err = s.GetRange(ctx, tc.key, off, 2000)
		if err != nil {
			t.Fatalf("GetRange(%s): %v", tc.key, err)
		}
		if part := readAll(t, rc); !bytes.Equal(part, data[off:off+2000]) {
			t.Fatalf("%s: range across 16 MiB differs", tc.key)
		}
	}
}

func testRoundTripSmall(t *testing.T, s blob.Store) {
	ctx := t.Context()
	// Valid keys with characters that need care in URLs and file names.
	for i, key := range []string{
		"empty.txt",
		"t1/c1/v1/index.html",
		"t1/c1/v1/a b/c d.html",
		"t1/c1/v1/ünïcode/ファイル.txt",
		"t1/c1/v1/.hidden",
		"t1/c1/v1/..dots",
		"t1/c1/v1/q?x=1&y=%20#frag",
		"t1/c1/v1/" + strings.Repeat("s", blob.MaxSegmentLength),
	} {
		data := randomBytes(uint64(i), 100*i) // the first is empty
		for _, size := range []int64{int64(len(data)), -1} {
			info, err := s.Put(ctx, key, bytes.NewReader(data), size)
			if err != nil {
				t.Fatalf("Put(%q, size %d): %v", key, size, err)
			}
			checkInfo(t, "Put", info, key, int64(len(data)))
			if got := getBytes(t, s, key); !bytes.Equal(got, data) {
				t.Fatalf("Get(%q) = %d bytes, want %d", key, len(got), len(data))
			}
			st, err := s.Stat(ctx, key)
			if err != nil {
				t.Fatalf("Stat(%q): %v", key, err)
			}
			checkInfo(t, "Stat", st, key, int64(len(data)))
			if st.ETag != info.ETag {
				t.Errorf("Stat(%q).ETag = %q, Put returned %q", key, st.ETag, info.ETag)
			}
		}
	}
}

func testGetRange(t *testing.T, s blob.Store) {
	ctx := t.Context()
	data := randomBytes(2, 1000)
	put(t, s, "r/data.bin", data)
	put(t, s, "r/empty.bin", nil)
	for _, tc := range []struct {
		name           string
		key            string
		offset, length int64
		want           []byte // nil with wantErr set
		wantErr        error
	}{
		{"middle", "r/data.bin", 100, 50, data[100:150], nil},
		{"start", "r/data.bin", 0, 10, data[:10], nil},
		{"whole", "r/data.bin", 0, -1, data, nil},
		{"to end", "r/data.bin", 900, -1, data[900:], nil},
		{"last byte", "r/data.bin", 999, 1, data[999:], nil},
		{"length past end is cut", "r/data.bin", 900, 500, data[900:], nil},
		{"huge length is cut", "r/data.bin", 10, 1 << 62, data[10:], nil},
		{"zero length", "r/data.bin", 500, 0, []byte{}, nil},
		{"offset at end", "r/data.bin", 1000, -1, []byte{}, nil},
		{"offset at end with length", "r/data.bin", 1000, 10, []byte{}, nil},
		{"empty blob", "r/empty.bin", 0, -1, []byte{}, nil},
		{"empty blob with length", "r/empty.bin", 0, 10, []byte{}, nil},
		{"offset past end", "r/data.bin", 1001, -1, nil, blob.ErrInvalidRange},
		{"offset far past end", "r/data.bin", 5000, 10, nil, blob.ErrInvalidRange},
		{"offset past empty", "r/empty.bin", 1, -1, nil, blob.ErrInvalidRange},
		{"negative offset", "r/data.bin", -1, 10, nil, blob.ErrInvalidRange},
		{"negative length", "r/data.bin", 0, -2, nil, blob.ErrInvalidRange},
		{"missing", "r/missing.bin", 0, 10, nil, blob.ErrNotFound},
		{"missing zero length", "r/missing.bin", 0, 0, nil, blob.ErrNotFound},
		{"invalid key", "r/../data.bin", 0, 10, nil, blob.ErrInvalidKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := s.GetRange(ctx, tc.key, tc.offset, tc.length)
			if tc.wantErr != nil {
				if rc != nil {
					rc.Close()
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("GetRange(%q, %d, %d) error = %v, want %v", tc.key, tc.offset, tc.length, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("GetRange(%q, %d, %d): %v", tc.key, tc.offset, tc.length, err)
			}
			if got := readAll(t, rc); !bytes.Equal(got, tc.want) {
				t.Fatalf("GetRange(%q, %d, %d) = %d bytes, want %d", tc.key, tc.offset, tc.length, len(got), len(tc.want))
			}
		})
	}
}

func testList(t *testing.T, s blob.Store) {
	ctx := t.Context()
	// '-' and '.' sort before '/', so a directory walk that visits "a/b/" before "a/b-x"
	// gets the order wrong; S3 lists by plain byte order.
	keys := []string{"a/b/1", "a/b/2", "a/b/c/d", "a/bc", "a/b-x", "a/b.y", "a-c", "a/b/c.txt", "b/x", "a0"}
	sizes := map[string]int{}
	for i, k := range keys {
		sizes[k] = i * 3
		put(t, s, k, randomBytes(uint64(i), i*3))
	}
	sorted := slices.Sorted(slices.Values(keys))
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", sorted},
		{"a/b/", []string{"a/b/1", "a/b/2", "a/b/c.txt", "a/b/c/d"}},
		{"a/b", []string{"a/b-x", "a/b.y", "a/b/1", "a/b/2", "a/b/c.txt", "a/b/c/d", "a/bc"}},
		{"a/b/c", []string{"a/b/c.txt", "a/b/c/d"}},
		{"a", []string{"a-c", "a/b-x", "a/b.y", "a/b/1", "a/b/2", "a/b/c.txt", "a/b/c/d", "a/bc", "a0"}},
		{"a/bc", []string{"a/bc"}},
		{"a/bc/", nil},
		{"b/x", []string{"b/x"}},
		{"nothing/", nil},
		{"nothing", nil},
	} {
		var got []string
		err := s.List(ctx, tc.prefix, func(info blob.Info) error {
			got = append(got, info.Key)
			if info.Size != int64(sizes[info.Key]) {
				t.Errorf("List(%q): %s has size %d, want %d", tc.prefix, info.Key, info.Size, sizes[info.Key])
			}
			if info.ModTime.IsZero() {
				t.Errorf("List(%q): %s has no ModTime", tc.prefix, info.Key)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("List(%q): %v", tc.prefix, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}

	// An error from fn stops the listing and comes back unchanged.
	stop := errors.New("stop")
	var seen int
	err := s.List(ctx, "a/", func(blob.Info) error {
		seen++
		if seen == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 2 {
		t.Errorf("List with a failing callback: err %v after %d calls, want %v after 2", err, seen, stop)
	}
}

func testDelete(t *testing.T, s blob.Store) {
	ctx := t.Context()
	put(t, s, "d/x/1", []byte("one"))
	put(t, s, "d/x/2", []byte("two"))
	if err := s.Delete(ctx, "d/x/1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Stat(ctx, "d/x/1"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat after Delete: %v, want ErrNotFound", err)
	}
	if got := getBytes(t, s, "d/x/2"); string(got) != "two" {
		t.Fatalf("sibling changed by Delete: %q", got)
	}
	// Deleting again, a missing key, or a "directory" is not an error and changes nothing.
	for _, k := range []string{"d/x/1", "d/none", "d/x", "d"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatalf("Delete(%q): %v, want nil", k, err)
		}
	}
	wantKeys(t, s, "", "d/x/2")
	// A key whose "directory" was emptied can be written again.
	if err := s.Delete(ctx, "d/x/2"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "")
	put(t, s, "d/x/3", []byte("three"))
	wantKeys(t, s, "", "d/x/3")
}

func testDeletePrefix(t *testing.T, s blob.Store) {
	ctx := t.Context()
	for _, k := range []string{"t/c1/v1/a", "t/c1/v1/b/c", "t/c1/v1/b/d", "t/c1/v10/a", "t/c1/v2/a", "t/c2/v1/a"} {
		put(t, s, k, []byte(k))
	}
	n, err := s.DeletePrefix(ctx, "t/c1/v1/")
	if err != nil || n != 3 {
		t.Fatalf("DeletePrefix(t/c1/v1/) = %d, %v; want 3, nil", n, err)
	}
	wantKeys(t, s, "", "t/c1/v10/a", "t/c1/v2/a", "t/c2/v1/a")

	n, err = s.DeletePrefix(ctx, "t/c1/v1/")
	if err != nil || n != 0 {
		t.Fatalf("DeletePrefix again = %d, %v; want 0, nil", n, err)
	}
	// A prefix ending inside a segment is a string prefix, as in List.
	n, err = s.DeletePrefix(ctx, "t/c1/v")
	if err != nil || n != 2 {
		t.Fatalf("DeletePrefix(t/c1/v) = %d, %v; want 2, nil", n, err)
	}
	wantKeys(t, s, "", "t/c2/v1/a")

	if _, err := s.DeletePrefix(ctx, ""); !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("DeletePrefix(\"\") = %v, want ErrInvalidKey", err)
	}
	wantKeys(t, s, "", "t/c2/v1/a")

	// More keys than one S3 DeleteObjects batch (1000) holds.
	const many = 1100
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range many {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			key := fmt.Sprintf("m/%02d/%04d", i%7, i)
			if _, err := s.Put(ctx, key, strings.NewReader("x"), 1); err != nil {
				t.Errorf("Put(%s): %v", key, err)
			}
		})
	}
	wg.Wait()
	n, err = s.DeletePrefix(ctx, "m/")
	if err != nil || n != many {
		t.Fatalf("DeletePrefix(m/) = %d, %v; want %d, nil", n, err, many)
	}
	wantKeys(t, s, "", "t/c2/v1/a")
}

func testOverwrite(t *testing.T, s blob.Store) {
	ctx := t.Context()
	first := put(t, s, "o/file", []byte("the first, longer version"))
	second := put(t, s, "o/file", []byte("second"))
	if got := getBytes(t, s, "o/file"); string(got) != "second" {
		t.Fatalf("after overwrite Get = %q", got)
	}
	st, err := s.Stat(ctx, "o/file")
	if err != nil || st.Size != 6 {
		t.Fatalf("Stat after overwrite = %+v, %v", st, err)
	}
	if first.ETag == second.ETag {
		t.Errorf("ETag did not change on overwrite: %q", first.ETag)
	}
	wantKeys(t, s, "", "o/file")
}

func testSizeMismatch(t *testing.T, s blob.Store) {
	ctx := t.Context()
	put(t, s, "s/kept", []byte("old"))
	for _, tc := range []struct {
		name string
		data string
		size int64
	}{
		{"short", "12345", 10},
		{"long", "12345678901234567890", 10},
		{"empty but sized", "", 3},
		{"sized zero but not empty", "x", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{"s/new", "s/kept"} {
				_, err := s.Put(ctx, key, onlyReader{strings.NewReader(tc.data)}, tc.size)
				if !errors.Is(err, blob.ErrSizeMismatch) {
					t.Fatalf("Put(%s, %d bytes, size %d) = %v, want ErrSizeMismatch", key, len(tc.data), tc.size, err)
				}
			}
			if _, err := s.Stat(ctx, "s/new"); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("a failed Put created the blob: Stat = %v", err)
			}
			if got := getBytes(t, s, "s/kept"); string(got) != "old" {
				t.Fatalf("a failed Put changed the old blob to %q", got)
			}
		})
	}
	// A failing reader behaves the same way.
	boom := errors.New("reader failed")
	_, err := s.Put(ctx, "s/kept", io.MultiReader(strings.NewReader("partial"), errReader{boom}), -1)
	if !errors.Is(err, boom) {
		t.Fatalf("Put with a failing reader = %v, want %v", err, boom)
	}
	if got := getBytes(t, s, "s/kept"); string(got) != "old" {
		t.Fatalf("a failed Put changed the old blob to %q", got)
	}
	wantKeys(t, s, "", "s/kept")
}

func testNotFound(t *testing.T, s blob.Store) {
	ctx := t.Context()
	put(t, s, "n/present", []byte("x"))
	for _, key := range []string{"missing", "n/missing", "n/present/below", "n"} {
		if rc, _, err := s.Get(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			if rc != nil {
				rc.Close()
			}
			t.Errorf("Get(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", key, err)
		}
		if rc, err := s.GetRange(ctx, key, 0, 1); !errors.Is(err, blob.ErrNotFound) {
			if rc != nil {
				rc.Close()
			}
			t.Errorf("GetRange(%q) = %v, want ErrNotFound", key, err)
		}
	}
}

func testHostileKeys(t *testing.T, s blob.Store) {
	ctx := t.Context()
	put(t, s, "x", []byte("decoy"))
	put(t, s, "a/b", []byte("decoy"))
	for _, key := range HostileKeys {
		r := &watchReader{r: strings.NewReader("payload")}
		if _, err := s.Put(ctx, key, r, 7); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if r.read {
			t.Errorf("Put(%q) read its body before refusing the key", key)
		}
		if rc, _, err := s.Get(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			if rc != nil {
				rc.Close()
			}
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
		if rc, err := s.GetRange(ctx, key, 0, 1); !errors.Is(err, blob.ErrInvalidKey) {
			if rc != nil {
				rc.Close()
			}
			t.Errorf("GetRange(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Stat(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	for _, prefix := range HostilePrefixes {
		called := false
		if err := s.List(ctx, prefix, func(blob.Info) error { called = true; return nil }); !errors.Is(err, blob.ErrInvalidKey) || called {
			t.Errorf("List(%q) = %v (callback called: %v), want ErrInvalidKey", prefix, err, called)
		}
		if n, err := s.DeletePrefix(ctx, prefix); !errors.Is(err, blob.ErrInvalidKey) || n != 0 {
			t.Errorf("DeletePrefix(%q) = %d, %v, want 0, ErrInvalidKey", prefix, n, err)
		}
	}
	// Nothing was written or removed.
	wantKeys(t, s, "", "a/b", "x")
	for _, k := range []string{"x", "a/b"} {
		if got := getBytes(t, s, k); string(got) != "decoy" {
			t.Errorf("%s changed to %q", k, got)
		}
	}
}

// testKeyAndPrefixConflict pins the one place backends may differ: a key that is also the
// "directory" of another key. Either both are stored, or the second Put fails with
// ErrInvalidKey; the first blob is never damaged, and DeletePrefix removes all of them
// (MinIO hides "k/file/child" from listings while "k/file" exists).
func testKeyAndPrefixConflict(t *testing.T, s blob.Store) {
	ctx := t.Context()
	put(t, s, "k/file", []byte("file"))
	if _, err := s.Put(ctx, "k/file/child", strings.NewReader("child"), 5); err != nil && !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("Put below a blob = %v, want nil or ErrInvalidKey", err)
	}
	put(t, s, "k/dir/child", []byte("child"))
	if _, err := s.Put(ctx, "k/dir", strings.NewReader("dir"), 3); err != nil && !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("Put over a prefix = %v, want nil or ErrInvalidKey", err)
	}
	if got := getBytes(t, s, "k/file"); string(got) != "file" {
		t.Fatalf("k/file = %q", got)
	}
	if got := getBytes(t, s, "k/dir/child"); string(got) != "child" {
		t.Fatalf("k/dir/child = %q", got)
	}
	put(t, s, "other", []byte("x"))
	if _, err := s.DeletePrefix(ctx, "k/"); err != nil {
		t.Fatalf("DeletePrefix(k/): %v", err)
	}
	wantKeys(t, s, "", "other")
	for _, k := range []string{"k/file", "k/file/child", "k/dir", "k/dir/child"} {
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat(%s) after DeletePrefix = %v, want ErrNotFound", k, err)
		}
	}
}

func testConcurrentPuts(t *testing.T, s blob.Store) {
	ctx := t.Context()
	const workers, perWorker = 8, 8
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				// Workers share directories, so creating them races too.
				key := fmt.Sprintf("c/%d/%d.bin", i, w)
				data := randomBytes(uint64(w*100+i), 1000+w*perWorker+i)
				if _, err := s.Put(ctx, key, bytes.NewReader(data), int64(len(data))); err != nil {
					t.Errorf("Put(%s): %v", key, err)
				}
			}
		})
	}
	// Meanwhile, writers race on one key; every read sees one complete version.
	versions := make([][]byte, 4)
	for v := range versions {
		versions[v] = bytes.Repeat([]byte{byte('A' + v)}, 64<<10)
	}
	for v := range versions {
		wg.Go(func() {
			for range 5 {
				if _, err := s.Put(ctx, "c/same", bytes.NewReader(versions[v]), -1); err != nil {
					t.Errorf("Put(c/same): %v", err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var want []string
	for w := range workers {
		for i := range perWorker {
			key := fmt.Sprintf("c/%d/%d.bin", i, w)
			want = append(want, key)
			data := randomBytes(uint64(w*100+i), 1000+w*perWorker+i)
			if got := getBytes(t, s, key); !bytes.Equal(got, data) {
				t.Errorf("%s: content differs", key)
			}
		}
	}
	want = append(want, "c/same")
	slices.Sort(want)
	wantKeys(t, s, "c/", want...)
	got := getBytes(t, s, "c/same")
	if !slices.ContainsFunc(versions, func(v []byte) bool { return bytes.Equal(v, got) }) {
		t.Errorf("c/same holds a mix of versions (%d bytes)", len(got))
	}
}

// BenchmarkPutGet measures a 1 MiB Put followed by a full Get; backend test files call it from
// their own BenchmarkPutGet.
func BenchmarkPutGet(b *testing.B, s blob.Store) {
	ctx := context.Background()
	data := randomBytes(3, 1<<20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		key := fmt.Sprintf("bench/%d", i%16)
		if _, err := s.Put(ctx, key, bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
		rc, _, err := s.Get(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil {
			b.Fatal(err)
		}
		rc.Close()
	}
}

// put stores data under key and fails the test on error.
func put(t *testing.T, s blob.Store, key string, data []byte) blob.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

// getBytes reads a whole blob and fails the test on error.
func getBytes(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	rc, info, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	data := readAll(t, rc)
	if info.Size != int64(len(data)) {
		t.Errorf("Get(%q): Info.Size %d, read %d bytes", key, info.Size, len(data))
	}
	return data
}

func readAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	data, err := io.ReadAll(rc)
	closeOK(t, rc)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return data
}

func closeOK(t *testing.T, c io.Closer) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// wantKeys checks the full, ordered result of List(prefix).
func wantKeys(t *testing.T, s blob.Store, prefix string, want ...string) {
	t.Helper()
	var got []string
	if err := s.List(t.Context(), prefix, func(i blob.Info) error { got = append(got, i.Key); return nil }); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List(%q) = %q, want %q", prefix, got, want)
	}
}

func checkInfo(t *testing.T, op string, info blob.Info, key string, size int64) {
	t.Helper()
	if info.Key != key || info.Size != size {
		t.Errorf("%s(%q) Info = {Key %q, Size %d}, want {%q, %d}", op, key, info.Key, info.Size, key, size)
	}
	if info.ETag == "" {
		t.Errorf("%s(%q): empty ETag", op, key)
	}
	// Clocks of a remote server may differ a little; S3 keeps whole seconds.
	if d := time.Since(info.ModTime); d < -time.Minute || d > time.Hour {
		t.Errorf("%s(%q): ModTime %v is not recent", op, key, info.ModTime)
	}
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b)
	return b
}

// onlyReader hides every method but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// watchReader records whether anything read from it.
type watchReader struct {
	r    io.Reader
	read bool
}

func (w *watchReader) Read(p []byte) (int, error) { w.read = true; return w.r.Read(p) }

// errReader fails every Read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
