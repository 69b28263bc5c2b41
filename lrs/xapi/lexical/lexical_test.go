package lexical

import (
	"testing"
	"time"
)

func TestPrimitives(t *testing.T) {
	for s, want := range map[string]bool{
		"http://example.com/a": true, "urn:uuid:1": true, "mailto:a@b.c": true, "http://例え.jp/パス": true,
		"": false, "example.com": false, "http:": false, "http://a b": false, "1http://x": false, "http://x/<y>": false,
	} {
		if ValidIRI(s) != want {
			t.Errorf("ValidIRI(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{
		"9e13cefd-53d3-4eac-b5ed-2cf6693903bb": true, "9E13CEFD-53D3-4EAC-B5ED-2CF6693903BB": true,
		"9e13cefd53d34eacb5ed2cf6693903bb": false, "9e13cefd-53d3-4eac-b5ed-2cf6693903bg": false, "": false,
	} {
		if ValidUUID(s) != want {
			t.Errorf("ValidUUID(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{
		"en": true, "en-US": true, "de-DE": true, "zh-Hant": true, "zh-Hans-CN": true, "sr-Latn-RS": true,
		"cmn": true, "ase": true, "es-419": true, "x-private": true, "i-klingon": true, "de-CH-1901": true,
		"en-a-bbb-x-ccc": true, "zh-yue-HK": true,
		"something": false, "a12345678": false, "zh-z-aaa-z-bbb-c-ccc": false, "en-": false, "": false,
		"e": false, "en_US": false, "de-1901-1901": false, "en-a": false,
	} {
		if ValidLanguageTag(s) != want {
			t.Errorf("ValidLanguageTag(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{
		"PT4H35M59.14S": true, "PT16559.14S": true, "P3Y1M29DT4H35M59.14S": true, "P3Y": true, "P4W": true,
		"PT0S": true, "P1DT12H36M0.12567S": true,
		"P": false, "PT": false, "P4W1D": false, "P1DT": false, "1D": false, "P1.5DT1H": false, "PT1H30": false, "-P1D": false,
	} {
		if ValidDuration(s) != want {
			t.Errorf("ValidDuration(%q) != %v", s, want)
		}
	}
	for in, want := range map[string]string{
		"P1DT12H36M0.12567S": "P1DT12H36M0.12S", "PT1.1S": "PT1.1S", "PT1.10S": "PT1.1S", "PT1.001S": "PT1S", "P1D": "P1D", "PT3S": "PT3S",
	} {
		if got := TruncateDuration(in); got != want {
			t.Errorf("TruncateDuration(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	utc := func(s string) time.Time { tm, _ := time.Parse(time.RFC3339Nano, s); return tm }
	for s, want := range map[string]time.Time{
		"2013-05-18T05:32:34.804Z":      utc("2013-05-18T05:32:34.804Z"),
		"2023-05-04T12:00:00-05:00":     utc("2023-05-04T17:00:00Z"),
		"2008-09-15T15:53:00.601+00:00": utc("2008-09-15T15:53:00.601Z"),
		"2008-09-15T15:53:00+0130":      utc("2008-09-15T14:23:00Z"),
		"2008-09-15T15:53:00":           utc("2008-09-15T15:53:00Z"),
		"2016-12-31T23:59:60Z":          utc("2016-12-31T23:59:59Z"),
	} {
		got, err := ParseTimestamp(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTimestamp(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "should fail", "01/011/2015", "2015-13-01T00:00:00Z", "2015-02-29T00:00:00Z",
		"2015-01-01T24:00:00Z", "2015-01-01", "2008-09-15T15:53:00.601-00:00", "2008-09-15T15:53:00-0000", "2008-09-15T15:53:00-00"} {
		if _, err := ParseTimestamp(s); err == nil {
			t.Errorf("ParseTimestamp(%q) accepted", s)
		}
	}
	if got := FormatTimestamp(time.Date(2020, 1, 2, 3, 4, 5, 60_000_000, time.FixedZone("", 3600))); got != "2020-01-02T02:04:05.060Z" {
		t.Errorf("FormatTimestamp = %q", got)
	}
}
