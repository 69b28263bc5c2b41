package eval

import (
	"encoding/json"
	"os"
	"testing"
)

func TestZZTexts(t *testing.T) {
	if os.Getenv("ZZTEXTS") == "" {
		t.Skip()
	}
	var texts []string
	for _, it := range Set {
		texts = append(texts, it.Passage, it.Query)
	}
	b, _ := json.Marshal(texts)
	os.WriteFile(os.Getenv("ZZTEXTS"), b, 0o644)
}
