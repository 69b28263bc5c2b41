package jsdata

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestUnwrapCall(t *testing.T) {
	src := []byte(`window.globalProvideData('slide', '{"title":"Caf\u00e9 \\u0026 tea","n":3}');`)
	v, ok := UnwrapCall(src, "globalProvideData")
	m, _ := v.(map[string]any)
	if !ok || Str(m, "title") != "Café & tea" {
		t.Fatalf("UnwrapCall = %#v, %v", v, ok)
	}
	if n, ok := Num(m, "n"); !ok || n != 3 {
		t.Errorf("Num = %d, %v", n, ok)
	}
}

func TestLiteral(t *testing.T) {
	// A literal cut short by a call keeps what came before it.
	v, complete := Literal([]byte(`{a:'x',b:[1,true,cp.fd],c:{d:"y"},e:f(1)}`))
	want := map[string]any{"a": "x", "b": []any{json.Number("1"), true, ref("cp.fd")}, "c": map[string]any{"d": "y"}}
	if complete || !reflect.DeepEqual(v, want) {
		t.Errorf("Literal = %#v, %v; want %#v, false", v, complete, want)
	}
}

func TestCollectText(t *testing.T) {
	v, _ := Parse([]byte(`{"text":"Body <b>b</b>old","title":"Title","id":"x1","image":{"title":"pic.png"},"items":[{"text":"Title"}]}`))
	var parts []string
	CollectText(v, &parts, map[string]bool{})
	if want := []string{"Title", "Body bold"}; !reflect.DeepEqual(parts, want) {
		t.Errorf("CollectText = %q, want %q", parts, want)
	}
}
