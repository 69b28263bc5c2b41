package main

import (
	"fmt"
	"strconv"
	"strings"
)

// A soft memory limit makes the collector run as the process nears it instead of letting the
// heap reach the container's cap, where the kernel kills the process; the collector policy
// (app.RunGCPolicy) never sets its moving limit above it. The limit is LECTERN_MEMORY_LIMIT,
// else 90 % of the cgroup's memory limit (cgroup v2 memory.max, or v1
// memory.limit_in_bytes); GOMEMLIMIT, when set, decides instead.

// cgroupLimitFiles are where a container's memory limit is read, v2 first.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimit is the soft memory limit to set in bytes (0: none) and where it came from.
// readFile reads a cgroup file (os.ReadFile outside tests).
func memoryLimit(getenv func(string) string, readFile func(string) ([]byte, error)) (int64, string, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, "", nil
	}
	if v := getenv("LECTERN_MEMORY_LIMIT"); v != "" {
		n, err := parseBytes(v)
		if err != nil || n < 64<<20 {
			return 0, "", fmt.Errorf("LECTERN_MEMORY_LIMIT %q: give bytes of at least 64 MiB, such as 1536MiB or 2GiB", v)
		}
		return n, "LECTERN_MEMORY_LIMIT", nil
	}
	for _, f := range cgroupLimitFiles {
		b, err := readFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(s, 10, 64)
		// "max" (v2) or a huge number (v1's "no limit") is no limit.
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, "", nil
		}
		return n / 10 * 9, "90% of " + f, nil
	}
	return 0, "", nil
}

// parseBytes reads a size: a number of bytes with an optional KiB, MiB or GiB suffix.
func parseBytes(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if rest, ok := strings.CutSuffix(v, suffix); ok {
			v, mult = strings.TrimSpace(rest), m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("not a size: %q", v)
	}
	return n * mult, nil
}
