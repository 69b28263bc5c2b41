package jsdata

import (
	"testing"
	"unicode/utf8"
)

// FuzzJS covers the JavaScript string and data unwrapping the tool readers share: any
// input, whole or cut short, reads without panicking, and what it yields is valid UTF-8.
func FuzzJS(f *testing.F) {
	f.Add(`window.globalProvideData('data', '{"a":"\u00e9\ud83d\ude00\x41\u{1F600}"}');`)
	f.Add(`var d = {"question":"q","answers":[{"title":"a","correct":true,"matchTitle":"m"}],"feedback":{"a":"b"}};`)
	f.Add(`{a:{b:[1,'x',cp.fd,-2.5e3,{c:"\u00e9"}],d:true},e:new X()}`)
	f.Add(`{/*c*/ 'k' : [ , , ] // x` + "\n" + `}`)
	f.Fuzz(func(t *testing.T, src string) {
		b := []byte(src)
		if v, ok := UnwrapCall(b, "globalProvideData"); ok {
			var parts []string
			CollectText(v, &parts, map[string]bool{})
			for _, p := range parts {
				if !utf8.ValidString(p) {
					t.Fatalf("invalid UTF-8 in %q", p)
				}
			}
		}
		if len(b) > 0 {
			_, _, _ = Unquote(b)
			_, _ = Literal(b)
		}
	})
}
