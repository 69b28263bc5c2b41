package eval

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLoadCollection reads small collections in the Cranfield and CISI layouts written here
// (the real ones are not in the repository).
func TestLoadCollection(t *testing.T) {
	write := func(dir string, files map[string]string) {
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cran := t.TempDir()
	write(cran, map[string]string{
		"cran.all.1400": ".I 1\n.T\nwing flutter\n.A\nsmith\n.B\nj. ae. 1\n.W\nflutter of swept wings\nat high speed\n" +
			".I 2\n.T\nboundary layers\n.W\nlaminar flow\n.I 1401\n.W\nappended by a copy\n",
		"cran.qry": ".I 001\n.W\nwhat causes wing flutter\n.I 004\n.W\nlaminar\nboundary layers\n.I 005\n.W\nunjudged\n",
		"cranqrel": "1 1 1\n1 2 4\n2 2 2\n2 1 -1\n3 1 5\n",
	})
	c, err := LoadCollection(cran)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "cranfield" || len(c.Docs) != 2 || c.Docs[0].ID != "1" || c.Docs[0].Text != "wing flutter\nflutter of swept wings\nat high speed" {
		t.Fatalf("cranfield docs: %+v", c)
	}
	if len(c.Queries) != 2 || c.Queries[1].ID != "2" || c.Queries[1].Text != "laminar boundary layers" {
		t.Fatalf("cranfield queries (numbered in file order, unjudged left out): %+v", c.Queries)
	}
	if g := c.Queries[0].Rel; g["1"] != 4 || g["2"] != 1 || len(c.Queries[1].Rel) != 1 || c.Queries[1].Rel["2"] != 3 {
		t.Errorf("cranfield gains (5 - grade, no interest left out): %v %v", c.Queries[0].Rel, c.Queries[1].Rel)
	}

	cisi := t.TempDir()
	write(cisi, map[string]string{
		"CISI.ALL": ".I 1\n.T\nLibrary catalogues\n.A\nDoe\n.W\nCard catalogues.\n.X\n1 5 1\n.I 2\n.T\nIndexing\n.W\nIndexing terms.\n",
		"CISI.QRY": ".I 1\n.W\nHow are books catalogued?\n.I 2\n.T\nNone\n.W\nNothing relevant\n",
		"CISI.REL": "     1     1\t0\t0.000000\n",
	})
	c, err = LoadCollection(cisi)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "cisi" || len(c.Docs) != 2 || c.Docs[0].Text != "Library catalogues\nCard catalogues." ||
		len(c.Queries) != 1 || c.Queries[0].Rel["1"] != 1 {
		t.Fatalf("cisi: %+v", c)
	}

	cacm := t.TempDir()
	write(cacm, map[string]string{
		"cacm.all":   ".I 1\n.T\nPreliminary Report\n.B\nCACM December, 1958\n.A\nPerlis, A. J.\n.N\nCA581203 JB\n.X\n100\t5\t1\n.I 2\n.T\nTime sharing\n.W\nA system for IBM.\n",
		"query.text": ".I 1\n.W\n What articles deal with TSS (Time Sharing System)?\n.N\n 1. R. Alexander\n",
		"qrels.text": "01 2  0 0\n",
	})
	cc, err := LoadCollection(cacm)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Name != "cacm" || len(cc.Docs) != 2 || cc.Docs[0].Text != "Preliminary Report" || cc.Docs[1].Text != "Time sharing\nA system for IBM." ||
		len(cc.Queries) != 1 || cc.Queries[0].Text != "What articles deal with TSS (Time Sharing System)?" || cc.Queries[0].Rel["2"] != 1 {
		t.Fatalf("cacm (query 01 judged as 1): %+v", cc)
	}

	if _, err := LoadCollection(t.TempDir()); err == nil {
		t.Error("an empty directory loaded")
	}

	bm := NewBM25(c.Docs)
	if got := bm.Rank("indexing of catalogues", 10); !slices.Equal(got, []string{"2", "1"}) {
		t.Errorf("BM25 ranking %q, want 2 (two indexing) before 1", got)
	}
	if got := bm.Rank("zebra", 10); len(got) != 0 {
		t.Errorf("BM25 of an absent word: %q", got)
	}
}
