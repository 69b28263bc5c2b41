package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
)

const importUsage = `usage: lectern import PATH_OR_URL --tenant T --course ID [--new-version] [--server URL] [--key K --secret S]

Imports a course package (a local .zip or cmi5.xml, or the URL of one) into a running Lectern and prints
the imported activity tree. Credentials: --key/--secret, else LECTERN_KEY/LECTERN_SECRET, else
LECTERN_ROOT_USER/LECTERN_ROOT_PASSWORD. The server defaults to LECTERN_PUBLIC_URL or
http://localhost:8080.`

type importClient struct {
	base, auth string
	hc         *http.Client
	out        io.Writer
}

// runImport is the `lectern import` command: upload (or hand over a URL), poll the import
// job, print the result as a tree.
func runImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, importUsage) }
	tenantID := fs.String("tenant", "", "tenant id (engine tenants are lowercase)")
	courseID := fs.String("course", "", "course id after import")
	newVersion := fs.Bool("new-version", false, "add a version when the course exists")
	server := fs.String("server", first(getenv("LECTERN_PUBLIC_URL"), "http://localhost:8080"), "Lectern base URL")
	key := fs.String("key", first(getenv("LECTERN_KEY"), getenv("LECTERN_ROOT_USER")), "API key or root user")
	secret := fs.String("secret", first(getenv("LECTERN_SECRET"), getenv("LECTERN_ROOT_PASSWORD")), "API secret or root password")
	noProgress := fs.Bool("no-progress", false, "do not draw the upload progress bar")
	// Accept flags before and after the positional argument.
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) > 0 {
			positional = append(positional, args[0])
			args = args[1:]
		}
	}
	if len(positional) != 1 || *tenantID == "" || *courseID == "" {
		fs.Usage()
		return errors.New("import needs exactly one PATH_OR_URL, --tenant and --course")
	}
	if *key == "" || *secret == "" {
		return errors.New("no credentials: pass --key and --secret (or set LECTERN_KEY/LECTERN_SECRET)")
	}
	c := &importClient{base: strings.TrimRight(*server, "/"), hc: &http.Client{Timeout: 0}, out: stdout,
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(*key+":"+*secret))}
	engine := c.base + "/engine/api/v1/" + url.PathEscape(strings.ToLower(*tenantID))
	q := url.Values{"course": {*courseID}, "mayCreateNewVersion": {fmt.Sprint(*newVersion)}}
	target := positional[0]

	var jobID string
	var err error
	if u, perr := url.Parse(target); perr == nil && (u.Scheme == "http" || u.Scheme == "https") {
		jobID, err = c.importURL(ctx, engine+"/courses/importJobs?"+q.Encode(), target, *courseID)
	} else {
		jobID, err = c.upload(ctx, engine+"/courses/importJobs?"+q.Encode(), target, !*noProgress, stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "import job %s\n", jobID)
	res, err := c.wait(ctx, engine+"/courses/importJobs/"+url.PathEscape(jobID))
	if err != nil {
		return err
	}
	for _, w := range res.ParserWarnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if res.Status != "COMPLETE" {
		return fmt.Errorf("import failed: %s", res.Message)
	}
	var detail struct {
		ID           string        `json:"id"`
		Version      int           `json:"version"`
		Title        string        `json:"title"`
		Standard     string        `json:"courseLearningStandard"`
		RootActivity *treeActivity `json:"rootActivity"`
	}
	if err := c.getJSON(ctx, engine+"/courses/"+url.PathEscape(*courseID)+"/detail", &detail); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %q as course %s version %d (%s)\n", detail.Title, detail.ID, detail.Version, detail.Standard)
	printTree(stdout, detail.RootActivity, "", true, true)
	return nil
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

type treeActivity struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	LaunchURL string          `json:"launchUrl"`
	Children  []*treeActivity `json:"children"`
}

func printTree(w io.Writer, a *treeActivity, indent string, last, root bool) {
	if a == nil {
		return
	}
	branch, next := "├─ ", indent+"│  "
	if last {
		branch, next = "└─ ", indent+"   "
	}
	if root {
		branch, next = "", ""
	}
	line := fmt.Sprintf("%s%s%s (%s)", indent, branch, a.Title, a.ID)
	if a.LaunchURL != "" {
		line += "  → " + a.LaunchURL
	}
	fmt.Fprintln(w, line)
	for i, c := range a.Children {
		printTree(w, c, next, i == len(a.Children)-1, false)
	}
}

func (c *importClient) do(req *http.Request, out any) error {
	req.Header.Set("Authorization", c.auth)
	res, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if res.StatusCode >= 300 {
		var m struct{ Message string }
		_ = json.Unmarshal(body, &m)
		if m.Message == "" {
			m.Message = strings.TrimSpace(string(body))
		}
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, m.Message)
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

func (c *importClient) getJSON(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	return c.do(req, out)
}

func (c *importClient) importURL(ctx context.Context, endpoint, zipURL, name string) (string, error) {
	b, _ := json.Marshal(map[string]string{"url": zipURL, "courseName": name})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	var r struct{ Result string }
	return r.Result, c.do(req, &r)
}

// upload streams the file as multipart through a pipe, so a large package is never held in
// memory, and draws the progress bar from the bytes actually sent.
func (c *importClient) upload(ctx context.Context, endpoint, path string, progress bool, stderr io.Writer) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	var src io.Reader = f
	if progress {
		bar := progressbar.NewOptions64(st.Size(), progressbar.OptionSetWriter(stderr), progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription("uploading "+filepath.Base(path)), progressbar.OptionClearOnFinish())
		src = io.TeeReader(f, bar)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", filepath.Base(path))
		if err == nil {
			_, err = io.Copy(part, src)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, pr)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var r struct{ Result string }
	return r.Result, c.do(req, &r)
}

type importResult struct {
	Status         string   `json:"status"`
	Message        string   `json:"message"`
	ParserWarnings []string `json:"parserWarnings"`
}

func (c *importClient) wait(ctx context.Context, u string) (*importResult, error) {
	for {
		var r importResult
		if err := c.getJSON(ctx, u, &r); err != nil {
			return nil, err
		}
		if r.Status != "RUNNING" {
			return &r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}
