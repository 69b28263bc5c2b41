package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/indexer/embed/onnx"
)

// TestModelDirConfig checks that the default model location follows the configuration the
// process is given (LECTERN_CACHE_DIR, else HOME), and that LECTERN_MODEL_DIR wins.
func TestModelDirConfig(t *testing.T) {
	cache, home, explicit := t.TempDir(), t.TempDir(), t.TempDir()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"cache dir":       {map[string]string{"LECTERN_CACHE_DIR": cache, "HOME": home}, filepath.Join(cache, "model", onnx.DefaultInstallDir)},
		"home":            {map[string]string{"HOME": home}, filepath.Join(home, ".cache", "lectern", "model", onnx.DefaultInstallDir)},
		"model dir":       {map[string]string{"LECTERN_MODEL_DIR": explicit, "LECTERN_CACHE_DIR": cache}, explicit},
		"nothing to find": {map[string]string{}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"LECTERN_DATA_DIR": t.TempDir(), "LECTERN_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			cfg, err := loadConfig(func(k string) string { return env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ModelDir != tc.want {
				t.Fatalf("ModelDir = %q, want %q", cfg.ModelDir, tc.want)
			}
		})
	}
}

// TestEnvReadInCmdOnly holds the rule that configuration is read in cmd/ only: no production
// package outside cmd/ reads the process environment. Test-support packages (those that
// import "testing" in their non-test files, such as internal/testenv) may.
func TestEnvReadInCmdOnly(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readers := map[string]bool{"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true}
	type use struct{ pos, call string }
	uses := map[string][]use{} // package dir -> environment reads
	testSupport := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "cmd" || (rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(rel)
		osName := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch p {
			case "testing":
				testSupport[dir] = true
			case "os":
				osName = "os"
				if imp.Name != nil {
					osName = imp.Name.Name
				}
			}
		}
		if osName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == osName && readers[sel.Sel.Name] {
				uses[dir] = append(uses[dir], use{fset.Position(sel.Pos()).String(), "os." + sel.Sel.Name})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(testSupport) == 0 {
		t.Fatal("found no test-support package: the walk did not see the repository")
	}
	for dir, us := range uses {
		if testSupport[dir] {
			continue
		}
		for _, u := range us {
			rel, _ := filepath.Rel(root, u.pos)
			t.Errorf("%s: %s outside cmd/: read configuration in cmd/lectern and pass the value in", rel, u.call)
		}
	}
}

// TestContentOrigin: the content origin defaults to the port after LECTERN_ADDR's, on
// LECTERN_PUBLIC_URL's host, and may not be the APIs' own origin.
func TestContentOrigin(t *testing.T) {
	for addr, want := range map[string]string{":8080": ":8081", "127.0.0.1:9000": "127.0.0.1:9001", "127.0.0.1:0": "127.0.0.1:0", "[::1]:80": "[::1]:81"} {
		if got, err := defaultContentAddr(addr); err != nil || got != want {
			t.Errorf("defaultContentAddr(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := defaultContentAddr("127.0.0.1:http"); err == nil {
		t.Error("a named port: no error")
	}
	env := map[string]string{"LECTERN_DATA_DIR": t.TempDir(), "LECTERN_ADDR": "127.0.0.1:0", "LECTERN_PUBLIC_URL": "https://lectern.example.com"}
	cfg, err := loadConfig(func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenContent(&cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if want := "https://lectern.example.com:" + port; cfg.ContentURL != want {
		t.Errorf("derived content origin %q, want %q", cfg.ContentURL, want)
	}
	for _, bad := range []string{"https://lectern.example.com", "https://lectern.example.com/", "ftp://content.example.com", "https://content.example.com/path", "content.example.com"} {
		env["LECTERN_CONTENT_URL"] = bad
		if _, err := loadConfig(func(k string) string { return env[k] }, io.Discard); err == nil || !strings.Contains(err.Error(), "LECTERN_CONTENT_URL") {
			t.Errorf("LECTERN_CONTENT_URL=%q: %v, want an error naming it", bad, err)
		}
	}
	env["LECTERN_CONTENT_URL"] = "https://content.example.com/"
	if cfg, err := loadConfig(func(k string) string { return env[k] }, io.Discard); err != nil || cfg.ContentURL != "https://content.example.com" {
		t.Errorf("a content origin of its own: %q, %v", cfg.ContentURL, err)
	}
}
