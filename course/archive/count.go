package archive

import (
	"encoding/binary"
	"io"
)

// Signatures and lengths of the records at the end of a zip (APPNOTE 4.3.14-4.3.16).
const (
	sigEOCD        = 0x06054b50
	sigZip64EOCD   = 0x06064b50
	sigZip64Locate = 0x07064b50
	lenEOCD        = 22
	lenZip64Locate = 20
	lenZip64EOCD   = 56
)

// declaredEntries reads the entry count from the end-of-central-directory record, without
// parsing the directory. zip.NewReader allocates a few hundred bytes per entry, so a
// 512 MiB upload of minimal directory records would cost gigabytes before the MaxEntries
// check could run; reading the count first refuses it for the price of two small reads.
// It finds the record the way archive/zip does (the last signature whose comment fits) and
// returns ok=false when it cannot tell, leaving the verdict to zip.NewReader; Open checks
// the parsed count again anyway.
func declaredEntries(r io.ReaderAt, size int64) (n uint64, ok bool) {
	tail := min(size, lenEOCD+0xffff)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	i := len(buf) - lenEOCD
	for ; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == sigEOCD {
			break
		}
	}
	if i < 0 {
		return 0, false
	}
	if comment := int(binary.LittleEndian.Uint16(buf[i+20:])); i+lenEOCD+comment > len(buf) {
		return 0, false
	}
	n = uint64(binary.LittleEndian.Uint16(buf[i+10:]))
	if n != 0xffff {
		return n, true
	}
	// Zip64: the locator sits just before the EOCD record and points at the zip64 record.
	eocd := size - tail + int64(i)
	if eocd < lenZip64Locate {
		return n, true
	}
	var loc [lenZip64Locate]byte
	if _, err := r.ReadAt(loc[:], eocd-lenZip64Locate); err != nil || binary.LittleEndian.Uint32(loc[:]) != sigZip64Locate {
		return n, true
	}
	off := binary.LittleEndian.Uint64(loc[8:])
	if off > uint64(size-lenZip64EOCD) {
		return 0, false
	}
	var rec [lenZip64EOCD]byte
	if _, err := r.ReadAt(rec[:], int64(off)); err != nil || binary.LittleEndian.Uint32(rec[:]) != sigZip64EOCD {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[32:]), true
}
