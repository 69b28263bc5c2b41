// Package archive opens uploaded course packages (zip files) safely. An upload is hostile
// until checked: Open validates every entry of the central directory (names, file types,
// duplicates, sizes, compression ratios, overlapping data) before a single byte is
// extracted, and the readers it hands out enforce the real decompressed sizes, so neither a
// hostile name nor a zip bomb nor a lying header reaches the parsers or the blob store.
//
// Typical use by the import job:
//
//	a, err := archive.Open(tmpFile, size, archive.DefaultLimits())
//	// ... parse the package from a.FS(), record a.Warnings() ...
//	err = a.Extract(ctx, func(ctx context.Context, name string, r io.Reader, size int64) error {
//		_, err := store.Put(ctx, prefix+name, r, size)
//		return err
//	})
package archive

import (
	"archive/zip"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
)

// Limits bound what an archive may expand to. A zero (or negative) field takes the value
// from DefaultLimits, so a caller can tighten one limit without restating the others and a
// zero Limits{} is never "unlimited".
type Limits struct {
	// MaxEntries is the most entries the central directory may list, junk included: every
	// entry costs a check and, for files, a blob.
	MaxEntries int
	// MaxTotalSize is the most bytes all extracted files may add up to, uncompressed.
	MaxTotalSize int64
	// MaxEntrySize is the most bytes one file may decompress to.
	MaxEntrySize int64
	// MaxRatio is the highest uncompressed/compressed ratio allowed for one entry and for
	// the archive as a whole (total uncompressed size over the upload's size).
	MaxRatio float64
	// RatioMinSize is the uncompressed size from which the ratio applies to an entry (and
	// to the whole archive): small files may compress very well without costing anything.
	RatioMinSize int64
}

// DefaultLimits returns limits sized for real e-learning packages.
//
// Packages are mostly video and audio (stored at a ratio near 1) plus HTML, JavaScript, JSON
// and XML (ratio 5-10, rarely 20-30 for big generated data files). Deflate cannot exceed
// about 1032:1, which is what a zip bomb of zeros reaches, so a ratio limit of 200 leaves a
// wide margin for real content and still stops a bomb long before it matters: the
// upload limit (LECTERN_MAX_BODY_BYTES, 512 MiB) times 200 is far above MaxTotalSize anyway,
// and the ratio is what stops a 5 MB upload from writing gigabytes. Files under 1 MiB are
// exempt from the per-entry ratio, because a tiny blank image or padded JSON may compress
// 1000:1 and costs nothing. 20,000 entries covers the largest authoring-tool outputs seen
// (a few thousand files) ten times over; 2 GiB per file and 4 GiB in total allow long
// lecture videos while bounding the disk or bucket space one import can take.
func DefaultLimits() Limits {
	return Limits{
		MaxEntries:   20_000,
		MaxTotalSize: 4 << 30,
		MaxEntrySize: 2 << 30,
		MaxRatio:     200,
		RatioMinSize: 1 << 20,
	}
}

// withDefaults fills zero or negative fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = d.MaxTotalSize
	}
	if l.MaxEntrySize <= 0 {
		l.MaxEntrySize = d.MaxEntrySize
	}
	if l.MaxRatio <= 0 || math.IsNaN(l.MaxRatio) {
		l.MaxRatio = d.MaxRatio
	}
	if l.RatioMinSize <= 0 {
		l.RatioMinSize = d.RatioMinSize
	}
	return l
}

// File is one file of a checked archive.
type File struct {
	// Name is the clean, slash-separated path inside the package ("res/index.html"),
	// decoded to UTF-8; it is a valid tail for a blob key.
	Name string
	// Size is the file's uncompressed size. Readers yield exactly this many bytes or fail.
	Size int64
}

// Archive is an upload that passed Open's checks. It reads the underlying io.ReaderAt on
// demand, so that must stay open (and unchanged) while the Archive is used. Its methods are
// safe for concurrent use if the io.ReaderAt is (an *os.File is).
type Archive struct {
	files    []*entry         // exposed files, in central-directory order
	nodes    map[string]*node // the FS tree: files and directories, "." is the root
	warnings []string
}

// entry is one exposed file.
type entry struct {
	name string
	zf   *zip.File
	size int64
}

// Open reads the zip's central directory from r (size bytes long) and checks every entry
// against lim before anything is extracted. It refuses, with an *Error naming the entry:
//
//   - an upload that is not a zip (ErrNotZip);
//   - names that are absolute, contain ".." segments, backslashes, drive letters, control
//     characters, empty or "." segments, are invalid UTF-8 although flagged UTF-8, or that
//     blob.CleanKey otherwise rejects (ErrUnsafe);
//   - symbolic links and any other non-regular file (ErrUnsafe);
//   - duplicate names, and a name that is both a file and a folder ("a/b" and "a/b/c"),
//     because the blob store cannot hold both portably (ErrUnsafe);
//   - entries whose data overlap another's, the trick behind non-recursive zip bombs
//     (ErrUnsafe), or run past the end of the upload (ErrCorrupt);
//   - more than lim.MaxEntries entries, a file over lim.MaxEntrySize, a total over
//     lim.MaxTotalSize, or a ratio over lim.MaxRatio (ErrTooLarge);
//   - encrypted entries and compression methods other than store and deflate
//     (ErrUnsupported).
//
// Operating-system junk (__MACOSX/, .DS_Store, Thumbs.db, desktop.ini) is skipped and
// reported in Warnings, as are names decoded from CP437 and names that differ only in case.
func Open(r io.ReaderAt, size int64, lim Limits) (*Archive, error) {
	lim = lim.withDefaults()
	if size <= 0 {
		return nil, errNotZip(nil)
	}
	br := boundedReaderAt{r, size}
	if n, ok := declaredEntries(br, size); ok && n > uint64(lim.MaxEntries) {
		return nil, archiveErr(ErrTooLarge, "the package has %d entries; the limit is %d", n, lim.MaxEntries)
	}
	zr, err := zip.NewReader(br, size)
	if errors.Is(err, zip.ErrInsecurePath) && zr != nil {
		// Only returned under GODEBUG=zipinsecurepath=0; checkName applies stricter rules.
		err = nil
	}
	if err != nil {
		if isFormatErr(err) {
			return nil, errNotZip(err)
		}
		return nil, fmt.Errorf("reading the uploaded zip: %w", err)
	}
	// Again on the parsed directory, in case declaredEntries could not read the count;
	// everything below is linear in the number of entries.
	if n := len(zr.File); n > lim.MaxEntries {
		return nil, archiveErr(ErrTooLarge, "the package has %d entries; the limit is %d", n, lim.MaxEntries)
	}

	a := &Archive{nodes: map[string]*node{".": {name: ".", dir: true}}}
	var (
		kinds    = map[string]bool{} // name -> is a directory
		order    []string            // names of kinds, in archive order, for stable messages
		folded   = map[string]string{}
		junk     = map[string]int{}
		cp437    []string
		caseDups []string
		total    int64
		dirsSeen []string
	)
	for _, zf := range zr.File {
		name, decoded, err := decodeName(zf)
		if err != nil {
			return nil, err
		}
		isDir := strings.HasSuffix(name, "/") || zf.Mode().IsDir()
		clean := name
		if strings.HasSuffix(name, "/") {
			clean = name[:len(name)-1]
		}
		if err := checkName(zf.Name, clean); err != nil {
			return nil, err
		}
		if k := junkKind(clean); k != "" {
			junk[k]++
			continue
		}
		if decoded {
			cp437 = append(cp437, fmt.Sprintf("%q as %q", zf.Name, clean))
		}
		if wasDir, dup := kinds[clean]; dup {
			if wasDir && isDir {
				continue // a repeated folder entry adds nothing and harms nothing
			}
			if wasDir != isDir {
				return nil, entryErr(ErrUnsafe, zf.Name, "is both a file and a folder")
			}
			return nil, entryErr(ErrUnsafe, zf.Name, "appears twice in the archive")
		}
		kinds[clean] = isDir
		order = append(order, clean)
		// Case-only duplicates are legal in the blob store but collide on case-insensitive
		// disks and confuse authors whose links work on Windows and not here.
		low := strings.ToLower(clean)
		if other, ok := folded[low]; ok {
			caseDups = append(caseDups, fmt.Sprintf("%q and %q", other, clean))
		} else {
			folded[low] = clean
		}
		if isDir {
			dirsSeen = append(dirsSeen, clean)
			continue
		}

		mode := zf.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, entryErr(ErrUnsafe, zf.Name, "is a symbolic link; links are not allowed in packages")
		case mode.Type() != 0:
			return nil, entryErr(ErrUnsafe, zf.Name, "is not a regular file (%s)", mode.Type())
		case zf.Flags&flagEncrypted != 0:
			return nil, entryErr(ErrUnsupported, zf.Name, "is encrypted; upload the package without a password")
		case zf.Method != zip.Store && zf.Method != zip.Deflate:
			return nil, entryErr(ErrUnsupported, zf.Name, "uses compression method %d, which Lectern cannot read; re-create the zip with standard (deflate) compression", zf.Method)
		}
		if zf.UncompressedSize64 > uint64(lim.MaxEntrySize) {
			return nil, entryErr(ErrTooLarge, zf.Name, "is %s uncompressed; the limit is %s per file", formatSize(clampSize(zf.UncompressedSize64)), formatSize(lim.MaxEntrySize))
		}
		usize := int64(zf.UncompressedSize64)
		if usize > lim.RatioMinSize {
			if ratio := float64(usize) / float64(max(zf.CompressedSize64, 1)); ratio > lim.MaxRatio {
				return nil, entryErr(ErrTooLarge, zf.Name, "expands %.0f times (%s from %s), more than the limit of %g; this looks like a zip bomb",
					ratio, formatSize(usize), formatSize(clampSize(zf.CompressedSize64)), lim.MaxRatio)
			}
		}
		total += usize
		if total > lim.MaxTotalSize {
			return nil, archiveErr(ErrTooLarge, "the package is larger than the limit of %s uncompressed", formatSize(lim.MaxTotalSize))
		}
		a.files = append(a.files, &entry{name: clean, zf: zf, size: usize})
	}
	if total > lim.RatioMinSize {
		if ratio := float64(total) / float64(size); ratio > lim.MaxRatio {
			return nil, archiveErr(ErrTooLarge, "the package expands %.0f times (%s from a %s upload), more than the limit of %g; this looks like a zip bomb",
				ratio, formatSize(total), formatSize(size), lim.MaxRatio)
		}
	}
	// A file that is also a folder of another name ("a/b" and "a/b/c"): the local blob
	// backend refuses the second Put and MinIO hides one of them, so refuse it here, where
	// the message can name both entries.
	for _, name := range order {
		for i := strings.IndexByte(name, '/'); i >= 0; i = next(name, i) {
			if parentIsDir, ok := kinds[name[:i]]; ok && !parentIsDir {
				return nil, entryErr(ErrUnsafe, name[:i], "is a file, but %q needs it to be a folder", name)
			}
		}
	}
	if err := checkLayout(a.files, size); err != nil {
		return nil, err
	}

	a.buildTree(dirsSeen)
	for _, k := range junkOrder {
		if n := junk[k]; n > 0 {
			a.warnings = append(a.warnings, fmt.Sprintf("%s (%d %s)", junkWarning[k], n, plural(n, "entry", "entries")))
		}
	}
	if len(cp437) > 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("%d %s not UTF-8 and %s read as CP437, the zip standard's default (%s); re-create the zip with a tool that writes UTF-8 names if they look wrong",
			len(cp437), plural(len(cp437), "name was", "names were"), plural(len(cp437), "was", "were"), summarize(cp437)))
	}
	if len(caseDups) > 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("%d %s differ only in upper/lower case (%s); links may resolve to the wrong file on some systems",
			len(caseDups), plural(len(caseDups), "pair of names", "pairs of names"), summarize(caseDups)))
	}
	return a, nil
}

// checkLayout refuses file data that runs past the end of the upload or overlaps another
// file's. Overlapping entries are how non-recursive zip bombs reach ratios of millions
// while each entry looks modest, and no honest writer produces them. It reads each local
// header (DataOffset), once per file, which is cheap next to extracting.
func checkLayout(files []*entry, size int64) error {
	type span struct {
		start, end int64
		name       string
	}
	spans := make([]span, 0, len(files))
	for _, e := range files {
		off, err := e.zf.DataOffset()
		if err != nil {
			if isFormatErr(err) {
				return &Error{Kind: ErrCorrupt, Entry: e.zf.Name, Msg: fmt.Sprintf("zip entry %q has a damaged local header", e.zf.Name), Err: err}
			}
			return fmt.Errorf("reading zip entry %q: %w", e.zf.Name, err)
		}
		if off < 0 || e.zf.CompressedSize64 > uint64(size) || off > size-int64(e.zf.CompressedSize64) {
			return entryErr(ErrCorrupt, e.zf.Name, "has data running past the end of the upload; the file may be truncated")
		}
		if e.zf.CompressedSize64 > 0 {
			spans = append(spans, span{off, off + int64(e.zf.CompressedSize64), e.zf.Name})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return cmp.Compare(x.start, y.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return entryErr(ErrUnsafe, spans[i].name, "shares its data with zip entry %q; overlapping entries are a zip bomb technique", spans[i-1].name)
		}
	}
	return nil
}

// errOutOfRange is what boundedReaderAt returns for offsets a header pointed outside the
// upload; it is a format error, not an I/O failure.
var errOutOfRange = errors.New("offset outside the upload")

// boundedReaderAt confines reads to [0, size). Headers hold arbitrary 64-bit offsets, and
// without this a hostile one reaches the underlying ReaderAt as a negative offset, whose
// error would be indistinguishable from a failing disk.
type boundedReaderAt struct {
	r    io.ReaderAt
	size int64
}

func (b boundedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= b.size {
		if off == b.size && len(p) == 0 {
			return 0, nil
		}
		return 0, errOutOfRange
	}
	if rem := b.size - off; int64(len(p)) > rem {
		n, err := b.r.ReadAt(p[:rem], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return b.r.ReadAt(p, off)
}

// isFormatErr reports whether a zip parsing error means a malformed file rather than a
// failed read of the temporary file.
func isFormatErr(err error) bool {
	return errors.Is(err, zip.ErrFormat) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, errOutOfRange) ||
		errors.Is(err, zip.ErrAlgorithm) || errors.Is(err, zip.ErrChecksum)
}

// next returns the index of the next '/' in name after i, or -1.
func next(name string, i int) int {
	j := strings.IndexByte(name[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// clampSize converts a header size for messages without overflowing.
func clampSize(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summarize lists up to three examples, so that a warning stays readable for an archive
// with thousands of affected names.
func summarize(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:3], ", ") + fmt.Sprintf(" and %d more", len(items)-3)
}

// Files lists the archive's files (not folders, not junk) in the order they are stored.
func (a *Archive) Files() []File {
	out := make([]File, len(a.files))
	for i, e := range a.files {
		out[i] = File{Name: e.name, Size: e.size}
	}
	return out
}

// Warnings returns problems that did not stop the import but that the author should see:
// skipped junk (once per kind), names decoded from CP437, names differing only in case.
func (a *Archive) Warnings() []string { return slices.Clone(a.warnings) }
