package runtime

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lectern-lms/lectern/storage/record"
)

// TestEncodeRoundTrips: the stored form decodes to the record that was encoded, whatever its
// strings hold (quotes, backslashes, control characters, non-ASCII, invalid UTF-8 replaced as
// encoding/json would), and is valid JSON.
func TestEncodeRoundTrips(t *testing.T) {
	rt := &Record{Activity: `sco "values":null "1" \ é`, Dialect: SCORM2004, Attempt: 1765000000000000001, Sequence: 42, Commits: 7,
		Completed: true, HACP: &HACPSession{Open: true},
		Values: Values{"cmi.suspend_data": "a\"b\\c\n\r\t\x00\x1f</script>é☃ \u2028", "cmi.location": "", "bad": "x\xffy"}}
	b, err := encode(rt)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("not JSON: %s", b)
	}
	got, err := decode(&record.Record{Data: b})
	if err != nil {
		t.Fatal(err)
	}
	want := *rt
	want.Values = Values{}
	for k, v := range rt.Values {
		want.Values[k] = v
	}
	want.Values["bad"] = "x\uFFFDy"
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, want)
	}
	// The same as encoding/json's, but for the order of the names.
	var viaStd, viaOurs map[string]any
	std, _ := json.Marshal(rt)
	_ = json.Unmarshal(std, &viaStd)
	_ = json.Unmarshal(b, &viaOurs)
	if !reflect.DeepEqual(viaStd, viaOurs) {
		t.Fatalf("differs from encoding/json:\n%s\n%s", std, b)
	}
}

func FuzzEncode(f *testing.F) {
	f.Add("cmi.suspend_data", "a\"b\\c\n\x00é")
	f.Fuzz(func(t *testing.T, k, v string) {
		rt := &Record{Activity: k, Values: Values{k: v}}
		var std, ours map[string]any
		s, _ := json.Marshal(rt)
		b, err := encode(rt)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &ours); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		_ = json.Unmarshal(s, &std)
		if !reflect.DeepEqual(std, ours) {
			t.Fatalf("differs: %s vs %s", s, b)
		}
		// decode (the string-map reader) reads back what encoding/json reads.
		got, err := decode(&record.Record{Data: b})
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		var want Record
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Values, want.Values) {
			t.Fatalf("decode: %#v, encoding/json: %#v", got.Values, want.Values)
		}
	})
}

// TestDecodeValues: the stored values read back as encoding/json reads them, escapes, spaces
// and the sorted form older records have included.
func TestDecodeValues(t *testing.T) {
	for _, in := range []string{`{}`, `null`, ` { "a" : "b" , "c":"" } `, `{"q\"k":"v\\u00e9\u00e9\n","x":"\ud83d\ude00"}`,
		`{"a":"\u0001\"","b":"é"}`} {
		var want Values
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if want == nil {
			want = Values{}
		}
		got, err := decodeValues([]byte(in))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %#v (%v), want %#v", in, got, err, want)
		}
	}
	if _, err := decodeValues([]byte(`{"a":1}`)); err == nil {
		t.Fatal("a number value was read as a string")
	}
}

func BenchmarkDecodeBigRecord(b *testing.B) {
	c, err := ParseCommit(SCORM2004, BigCommit(10000))
	if err != nil {
		b.Fatal(err)
	}
	data, err := encode(&Record{Activity: "sco", Dialect: SCORM2004, Values: c.Values})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.Run("decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := decode(&record.Record{Data: data}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var rt Record
			if err := json.Unmarshal(data, &rt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeAnyLayout: decode finds the values wherever the stored object has them, with
// any spacing and strings that look like JSON, as encoding/json reads the same object.
func TestDecodeAnyLayout(t *testing.T) {
	for _, data := range []string{
		`{"activity":"a","values":{"cmi.exit":"suspend","k":"v"},"commits":2}`,
		`{"values":{"cmi.exit":"suspend","k":"v"},"activity":"a","commits":2}`,
		` { "activity" : "a" , "commits" : 2 , "values" : { "cmi.exit" : "suspend" , "k" : "v" } } `,
		`{"activity":"\"values\":{}}","hacp":{"session":"s]}","open":true},"values":{"cmi.exit":"suspend","k":"v"},"commits":2}`,
		`{"activity":"a","hacp":null,"completed":false,"values":{"k":"v\"}","cmi.exit":"sus\u0070end"},"commits":2,"sequence":-1.5e3}`,
		`{"activity":"a","values":null,"commits":2}`,
		`{"activity":"a","commits":2}`,
		`{"activity":"a","val\u0075es":{"k":"v"},"commits":2}`,
		`{"activity":"a","values":{"k":"é☃"},"commits":2}`,
	} {
		got, err := decode(&record.Record{Data: []byte(data)})
		var want Record
		if jerr := json.Unmarshal([]byte(data), &want); (err == nil) != (jerr == nil) {
			t.Fatalf("%s: decode error %v, encoding/json's %v", data, err, jerr)
		}
		if err != nil {
			continue
		}
		if want.Values == nil {
			want.Values = Values{}
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", data, got, want)
		}
	}
	for _, data := range []string{`{"activity":"a","values":{"k":1}}`, `{"activity":"a","values":{"k":"v"}`, `{"activity":"a","values":{"k":"v"}} x`, `[]`} {
		if _, err := decode(&record.Record{Data: []byte(data)}); err == nil {
			t.Fatalf("%s: decoded", data)
		}
	}
}

// TestEncodeLayers: a later layer hides a name in the earlier ones.
func TestEncodeLayers(t *testing.T) {
	b, err := encodeLayers(&Record{Activity: "a"}, Values{"a": "1", "b": "1"}, Values{"b": "2", "c": "2"}, Values{"c": "3"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decode(&record.Record{Data: b})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Values{"a": "1", "b": "2", "c": "3"}); !reflect.DeepEqual(got.Values, want) || string(b) == "" || bytes.Count(b, []byte(`"b"`)) != 1 {
		t.Fatalf("%s: %v, want %v", b, got.Values, want)
	}
}

// FuzzDecode: decode reads any stored form as encoding/json read it before (the record with
// its values left raw, then the values), and refuses what it refused.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"activity":"a","values":{"cmi.exit":"suspend","k":"v\"}"},"commits":2,"hacp":{"session":"s]}"}}`))
	f.Add([]byte(`{"values":{"k":"é☃\u0041"},"activity":"\"values\":{}","completed":true}`))
	f.Add([]byte(` { "activity" : "a" , "values" : null } `))
	f.Add([]byte(`{"values":{"a":"1"},"Values":{"b":"2"}}`))
	f.Add([]byte(`{"VALUES":{"a":"1"},"values":{"b":"2"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decode(&record.Record{Data: data})
		var want Record
		sr := storedRecord{recordAlias: (*recordAlias)(&want)}
		jerr := json.Unmarshal(data, &sr)
		if jerr == nil && len(sr.Values) > 0 && string(sr.Values) != "null" {
			jerr = json.Unmarshal(sr.Values, &want.Values)
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("%q: decode error %v, encoding/json's %v", data, err, jerr)
		}
		if err != nil {
			return
		}
		if want.Values == nil {
			want.Values = Values{}
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
		}
	})
}
