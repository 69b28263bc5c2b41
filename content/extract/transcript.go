package extract

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/content/extract/textnorm"
)

// transcriptChunk closes a window early once it holds this much text, so one fast talker
// does not produce a section too long to point at a moment.
const transcriptChunk = 2000

// vttTag matches WebVTT cue markup: <v Speaker>, <c.class>, <i>, <00:00:01.000> and their
// end tags. SRT files use <i>, <b>, <font …> the same way.
var vttTag = regexp.MustCompile(`</?[^>\n]{0,200}>|\{\\[^}]{0,100}\}`)

type cue struct {
	start, end time.Duration
	text       string
}

// transcript reads WebVTT or SRT cues and groups them into windows of e.window seconds,
// each located at its first cue's start ("00:01:23"). transcript_duration is the latest cue
// end ("00:12:34.500"), written with milliseconds as WebVTT timestamps are.
func (e *extractor) transcript(text string, kind Kind) {
	if kind == KindVTT {
		e.res.Details.ContentType = ContentVTT
	} else {
		e.res.Details.ContentType = ContentSRT
	}
	cues, bad := parseCues(text, kind)
	if bad > 0 {
		e.warn("%d cue timing lines could not be read and were skipped", bad)
	}
	var last time.Duration
	var buf []string
	var wStart time.Duration
	size := 0
	flush := func() {
		if len(buf) > 0 {
			e.add(formatClock(wStart), strings.Join(buf, "\n"))
		}
		buf, size = nil, 0
	}
	window := time.Duration(e.window) * time.Second
	prev := ""
	for i, c := range cues {
		if i%1024 == 0 && e.ctx.Err() != nil {
			return
		}
		last = max(last, c.end)
		if c.text == "" {
			continue
		}
		if len(buf) > 0 && (c.start-wStart >= window || size+len(c.text) > transcriptChunk) {
			flush()
		}
		if len(buf) == 0 {
			wStart = c.start
			prev = ""
		}
		// Roll-up captions repeat the previous line; keep it once.
		if c.text == prev {
			continue
		}
		prev = c.text
		buf = append(buf, c.text)
		size += len(c.text)
	}
	flush()
	if len(cues) > 0 {
		e.meta("transcript_duration", formatTimestamp(last))
	}
}

// parseCues returns the cues in file order and how many timing lines were unreadable.
// Cue blocks are separated by blank lines; a block's timing line is the one with "-->".
// WebVTT NOTE, STYLE and REGION blocks and SRT cue numbers are skipped.
func parseCues(text string, kind Kind) ([]cue, int) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var cues []cue
	bad := 0
	for block := range strings.SplitSeq(text, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if len(lines) == 0 {
			continue
		}
		first := strings.TrimSpace(lines[0])
		if kind == KindVTT && (strings.HasPrefix(first, "WEBVTT") || strings.HasPrefix(first, "NOTE") ||
			first == "STYLE" || first == "REGION") {
			continue
		}
		ti := -1
		for i, l := range lines[:min(len(lines), 3)] {
			if strings.Contains(l, "-->") {
				ti = i
				break
			}
		}
		if ti < 0 {
			continue
		}
		s, rest, _ := strings.Cut(lines[ti], "-->")
		start, ok1 := parseTimestamp(strings.TrimSpace(s))
		// After the end time come WebVTT cue settings ("align:start") or SRT coordinates.
		endField := strings.Fields(rest)
		var end time.Duration
		ok2 := len(endField) > 0
		if ok2 {
			end, ok2 = parseTimestamp(endField[0])
		}
		if !ok1 || !ok2 {
			bad++
			continue
		}
		if end < start {
			end = start
		}
		var parts []string
		for _, l := range lines[ti+1:] {
			l = textnorm.CollapseSpace(htmlUnescape(vttTag.ReplaceAllString(l, "")))
			if l != "" {
				parts = append(parts, l)
			}
		}
		cues = append(cues, cue{start: start, end: end, text: strings.Join(parts, " ")})
	}
	return cues, bad
}

// parseTimestamp reads "hh:mm:ss.mmm", "mm:ss.mmm" (WebVTT) and "hh:mm:ss,mmm" (SRT).
// Hours may have more than two digits; minutes and seconds must be below 60.
func parseTimestamp(s string) (time.Duration, bool) {
	s = strings.Replace(s, ",", ".", 1)
	main, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(main, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	var nums []int64
	for _, p := range parts {
		if p == "" || len(p) > 9 {
			return 0, false
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		nums = append(nums, n)
	}
	if len(nums) == 2 {
		nums = append([]int64{0}, nums...)
	}
	// Beyond 100,000 hours the sum would overflow time.Duration; no recording is that long.
	if nums[0] > 100_000 || nums[1] >= 60 || nums[2] >= 60 {
		return 0, false
	}
	var ms int64
	if hasFrac {
		if frac == "" || len(frac) > 3 {
			return 0, false
		}
		for len(frac) < 3 {
			frac += "0"
		}
		n, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		ms = n
	}
	d := time.Duration(nums[0])*time.Hour + time.Duration(nums[1])*time.Minute +
		time.Duration(nums[2])*time.Second + time.Duration(ms)*time.Millisecond
	return d, true
}

// formatClock writes a location timestamp, "01:02:03", truncated to the second.
func formatClock(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// formatTimestamp writes "01:02:03.456".
func formatTimestamp(d time.Duration) string {
	ms := int64(d / time.Millisecond)
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}
