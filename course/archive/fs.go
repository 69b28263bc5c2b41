package archive

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// node is one file or folder of the FS view. Folders that the zip does not list explicitly
// are implied by the files inside them, as every unzip tool does.
type node struct {
	name     string // full clean path, "." for the root
	dir      bool
	e        *entry // files only
	modTime  time.Time
	children []*node // folders only, sorted by name
}

// buildTree creates the FS view from the exposed files and the explicit folder entries.
func (a *Archive) buildTree(dirs []string) {
	var mkdir func(name string) *node
	mkdir = func(name string) *node {
		if n, ok := a.nodes[name]; ok {
			return n
		}
		n := &node{name: name, dir: true}
		a.nodes[name] = n
		parent := mkdir(path.Dir(name))
		parent.children = append(parent.children, n)
		return n
	}
	for _, d := range dirs {
		mkdir(d)
	}
	for _, e := range a.files {
		n := &node{name: e.name, e: e, modTime: e.zf.Modified}
		a.nodes[e.name] = n
		parent := mkdir(path.Dir(e.name))
		parent.children = append(parent.children, n)
	}
	for _, n := range a.nodes {
		if n.dir {
			slices.SortFunc(n.children, func(x, y *node) int { return strings.Compare(x.name, y.name) })
		}
	}
}

// FS returns the checked view of the archive for the parsers: only the exposed files and
// their folders (no junk), under their clean names. Reads enforce the same limits as
// Extract: a file never yields more than its checked size, and data beyond it fails with
// ErrTooLarge. The FS implements fs.ReadFileFS, fs.ReadDirFS and fs.StatFS.
func (a *Archive) FS() fs.FS { return archiveFS{a} }

type archiveFS struct{ a *Archive }

func (f archiveFS) lookup(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, ok := f.a.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Open opens a file or folder.
func (f archiveFS) Open(name string) (fs.File, error) {
	n, err := f.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return &dirFile{n: n}, nil
	}
	r, err := openEntry(n.e)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{n: n, r: r}, nil
}

// ReadFile reads a whole file, verified to its last byte.
func (f archiveFS) ReadFile(name string) ([]byte, error) {
	n, err := f.lookup("readfile", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errIsDir}
	}
	r, err := openEntry(n.e)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The size was checked against MaxEntrySize, and the reader never exceeds it.
	buf := make([]byte, n.e.size)
	// The reader fails with its own *Error before the declared size if the data is short,
	// so ReadFull never has to report a bare io.ErrUnexpectedEOF.
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	if err := r.drain(context.Background()); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadDir lists a folder, sorted by name.
func (f archiveFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := f.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		out[i] = info{c}
	}
	return out, nil
}

// Stat describes a file or folder without opening it.
func (f archiveFS) Stat(name string) (fs.FileInfo, error) {
	n, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

var (
	errIsDir  = errors.New("is a directory")
	errNotDir = errors.New("not a directory")
)

// info is both the fs.FileInfo and the fs.DirEntry of a node. Permissions are fixed
// (read-only) rather than taken from the archive, whose external attributes are untrusted.
type info struct{ n *node }

func (i info) Name() string { return path.Base(i.n.name) }
func (i info) Size() int64 {
	if i.n.dir {
		return 0
	}
	return i.n.e.size
}
func (i info) Mode() fs.FileMode {
	if i.n.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i info) ModTime() time.Time         { return i.n.modTime }
func (i info) IsDir() bool                { return i.n.dir }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.Mode().Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }
func (i info) String() string             { return fs.FormatDirEntry(i) }

// file is an open regular file.
type file struct {
	n *node
	r *entryReader
}

func (f *file) Stat() (fs.FileInfo, error) { return info{f.n}, nil }
func (f *file) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *file) Close() error               { return f.r.Close() }

// dirFile is an open folder.
type dirFile struct {
	n      *node
	off    int
	closed bool
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return info{d.n}, nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.n.name, Err: errIsDir}
}
func (d *dirFile) Close() error { d.closed = true; return nil }

// ReadDir follows fs.ReadDirFile: n > 0 returns at most n entries and io.EOF at the end.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.closed {
		return nil, &fs.PathError{Op: "readdir", Path: d.n.name, Err: fs.ErrClosed}
	}
	rest := d.n.children[d.off:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.off += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, c := range rest {
		out[i] = info{c}
	}
	return out, nil
}
