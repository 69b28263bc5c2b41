package main

import (
	"io/fs"
	"strings"
	"testing"
)

// TestMemoryLimit: the soft memory limit comes from LECTERN_MEMORY_LIMIT, else from the
// cgroup's limit (v2, then v1), and never when GOMEMLIMIT is set or the cgroup has none.
func TestMemoryLimit(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if v, ok := m[p]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		}
	}
	v2, v1 := cgroupLimitFiles[0], cgroupLimitFiles[1]
	for _, tc := range []struct {
		name  string
		env   map[string]string
		files map[string]string
		want  int64
		err   string
	}{
		{name: "nothing", want: 0},
		{name: "cgroup v2 limit", files: map[string]string{v2: "3221225472\n"}, want: 3221225472 / 10 * 9},
		{name: "cgroup v2 without limit", files: map[string]string{v2: "max\n", v1: "1000000000"}, want: 0},
		{name: "cgroup v1 limit", files: map[string]string{v1: "2147483648\n"}, want: 2147483648 / 10 * 9},
		{name: "cgroup v1 without limit", files: map[string]string{v1: "9223372036854771712\n"}, want: 0},
		{name: "setting", env: map[string]string{"LECTERN_MEMORY_LIMIT": "1536MiB"}, files: map[string]string{v2: "3221225472"}, want: 1536 << 20},
		{name: "setting in bytes", env: map[string]string{"LECTERN_MEMORY_LIMIT": "1073741824"}, want: 1 << 30},
		{name: "GOMEMLIMIT decides", env: map[string]string{"GOMEMLIMIT": "1GiB", "LECTERN_MEMORY_LIMIT": "2GiB"}, files: map[string]string{v2: "3221225472"}, want: 0},
		{name: "too small", env: map[string]string{"LECTERN_MEMORY_LIMIT": "10MiB"}, err: "at least 64 MiB"},
		{name: "not a size", env: map[string]string{"LECTERN_MEMORY_LIMIT": "lots"}, err: "LECTERN_MEMORY_LIMIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := memoryLimit(func(k string) string { return tc.env[k] }, files(tc.files))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("memoryLimit = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	if _, err := parseBytes("3GiB"); err != nil {
		t.Error(err)
	}
	if _, err := parseBytes("-1"); err == nil {
		t.Error("a negative size parsed")
	}
}
