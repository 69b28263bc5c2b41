package xapi

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"
)

// referenceDecode is the two-pass decode parseJSON replaced (encoding/json, then a token
// walk for duplicate keys), kept as the oracle of FuzzDecode.
func referenceDecode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Msg: "trailing data"}
	}
	dec = json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		obj, expKey bool
		keys        map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return x, nil
		}
		if err != nil {
			return nil, err
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].expKey {
			if k, ok := tok.(string); ok {
				if stack[n-1].keys[k] {
					return nil, &Error{Msg: "duplicate " + k}
				}
				stack[n-1].keys[k], stack[n-1].expKey = true, false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{obj: true, expKey: true, keys: map[string]bool{}})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].expKey = true
		}
	}
}

func TestParseJSON(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"a":1,"b":[true,false,null,"x\u00e9\ud83d\ude00\n"],"c":{"d":-1.5e+3}}`, true},
		{`  [] `, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1},"c":{"b":2}}`, true},
		{`{"a\u0062":1,"ab":2}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":"x` + "\x01" + `"}`, false},
		{`{"a":1}{}`, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`"\ud800"`, true},
		{`"\x"`, false},
		{``, false},
	} {
		got, err := parseJSON([]byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("parseJSON(%q): err %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		want, werr := referenceDecode([]byte(c.in))
		if c.ok && (werr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("parseJSON(%q) = %#v, encoding/json %#v (%v)", c.in, got, want, werr)
		}
	}
}

// FuzzDecode checks the single-pass parser against encoding/json plus the duplicate-key walk:
// the same inputs accepted, the same trees built.
func FuzzDecode(f *testing.F) {
	f.Add(stmtJSON())
	f.Add([]byte(`{"a":[1,-0.5e3,"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"],"b":{"a":null},"c":true}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`"\ud800\u0041"`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return
		}
		got, err := parseJSON(body)
		want, werr := referenceDecode(body)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: parseJSON err %v, reference err %v", body, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parseJSON %#v, reference %#v", body, got, want)
		}
	})
}

// FuzzMarshal checks appendTree against encoding/json (HTML escaping off) on every tree
// the parser accepts, and on the parsed strings taken as raw Go strings (invalid UTF-8 too).
func FuzzMarshal(f *testing.F) {
	f.Add(stmtJSON())
	f.Add([]byte(`{"a":["\u2028\u2029<>&\u0001\b\f\n\r\t\"\\",1.50,-0,1e3,true,null,{}],"b":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(x any) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(x); err != nil {
				return
			}
			want := bytes.TrimRight(buf.Bytes(), "\n")
			got, ok := appendTree(nil, x)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("appendTree(%#v) = %s (%v), encoding/json %s", x, got, ok, want)
			}
		}
		check(string(body))
		if x, err := parseJSON(body); err == nil {
			check(x)
			check(comparable(x))
		}
	})
}
