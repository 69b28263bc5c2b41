package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/extract/extracttest"
	"github.com/lectern-lms/lectern/content/extract/sandbox"
)

// The test binary is its own child: with this variable set it serves one extraction, as
// `lectern extract` does.
const childEnv = "LECTERN_SANDBOX_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := sandbox.Serve(context.Background(), os.Stdin, os.Stdout, os.NewFile(3, "content")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runner() *sandbox.Runner {
	return &sandbox.Runner{Command: []string{os.Args[0]}, Env: append(sandbox.RuntimeEnv(os.Environ()), childEnv+"=1")}
}

func file(t *testing.T, data []byte) (*os.File, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "content")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, int64(len(data))
}

func TestNormalDocument(t *testing.T) {
	f, size := file(t, extracttest.TextPDF("Gloves protect hands"))
	res, err := runner().Extract(context.Background(), extract.KindPDF, f, size, "gloves.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sections) != 1 || res.Sections[0].Text != "Gloves protect hands" || res.Details.ContentType != extract.ContentPDF {
		t.Fatalf("result %+v", res)
	}
}

func TestPackageInChild(t *testing.T) {
	doc := extracttest.ManyFilesPackage(2, 1<<10)
	f, size := file(t, doc.Data)
	res, err := runner().Extract(context.Background(), extract.KindPackage, f, size, doc.Name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Details.ContentType != extract.ContentPackage || len(res.Sections) == 0 {
		t.Fatalf("result %+v", res)
	}
	bomb := extracttest.ZipBombPackage(64 << 20)
	f, size = file(t, bomb.Data)
	if _, err := runner().Extract(context.Background(), extract.KindPackage, f, size, bomb.Name); !errors.Is(err, extract.ErrInvalid) || !strings.Contains(err.Error(), "zip bomb") {
		t.Fatalf("zip bomb: %v", err)
	}
}

// The child's error comes back with its sentinel and message.
func TestChildError(t *testing.T) {
	doc := extracttest.SelfReferencingPageTree()
	f, size := file(t, doc.Data)
	_, err := runner().Extract(context.Background(), extract.KindPDF, f, size, doc.Name)
	if !errors.Is(err, extract.ErrInvalid) || !strings.Contains(err.Error(), "refers to itself") {
		t.Fatalf("err = %v", err)
	}
}

// A document that needs more memory than the child is given ends the child, not the
// caller, and says so.
func TestMemoryLimit(t *testing.T) {
	doc := extracttest.ManyOperandsPDF(15 << 20)
	f, size := file(t, doc.Data)
	r := runner()
	r.MemoryBytes = 96 << 20
	_, err := r.Extract(context.Background(), extract.KindPDF, f, size, doc.Name)
	if !errors.Is(err, extract.ErrLimit) || !strings.Contains(err.Error(), "needed more than 96 MiB of memory") {
		t.Fatalf("err = %v", err)
	}
}

// A document that takes longer than the deadline is stopped at the deadline, and a caller
// that gives up (a job cancelled) stops the child at once.
func TestDeadlineAndCancel(t *testing.T) {
	doc := extracttest.SlowPDF(3000)
	f, size := file(t, doc.Data)
	r := runner()
	r.Timeout = time.Second
	start := time.Now()
	_, err := r.Extract(context.Background(), extract.KindPDF, f, size, doc.Name)
	if !errors.Is(err, extract.ErrLimit) || !strings.Contains(err.Error(), "took longer than 1s") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopped after %s", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start = time.Now()
	_, err = runner().Extract(ctx, extract.KindPDF, f, size, doc.Name)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancelled after %s", d)
	}
}
