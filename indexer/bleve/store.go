package bleve

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// recordKey encodes a version's key so that all keys of a tenant (and of a content item)
// share a prefix: length-prefixed tenant, length-prefixed content id, version.
func recordKey(tenant, contentID string, v int) string {
	return contentPrefix(tenant, contentID) + string(binary.BigEndian.AppendUint64(nil, uint64(int64(v))^(1<<63)))
}

func tenantPrefix(tenant string) string {
	return string(binary.AppendUvarint(nil, uint64(len(tenant)))) + tenant
}

func contentPrefix(tenant, contentID string) string {
	return tenantPrefix(tenant) + string(binary.AppendUvarint(nil, uint64(len(contentID)))) + contentID
}

// docID names a chunk ("c") or field ("f") document: the hex record key and the index.
func docID(kind byte, key string, i int) string {
	return string(kind) + hex.EncodeToString([]byte(key)) + "/" + strconv.Itoa(i)
}

func parseDocID(id string) (key string, i int, ok bool) {
	if len(id) < 2 {
		return "", 0, false
	}
	h, n, found := strings.Cut(id[1:], "/")
	if !found {
		return "", 0, false
	}
	k, err := hex.DecodeString(h)
	if err != nil {
		return "", 0, false
	}
	i, err = strconv.Atoi(n)
	return string(k), i, err == nil
}

func (ix *Index) remember(key string, r *record) {
	v := &version{key: key, tenant: r.Tenant, contentID: r.ContentID, version: r.Version, status: r.Status,
		fields: r.Fields, span: -1}
	for _, c := range r.Chunks {
		v.locations = append(v.locations, c.Location)
	}
	ix.versions[key] = v
	if ix.byTenant[r.Tenant] == nil {
		ix.byTenant[r.Tenant] = map[string]*version{}
	}
	ix.byTenant[r.Tenant][key] = v
	if ix.model.Dims > 0 {
		s := ix.vectors[r.Tenant]
		if s == nil {
			s = &vectorSet{dims: ix.model.Dims}
		}
		if s.add(v, r.Chunks); s.live > 0 {
			ix.vectors[r.Tenant] = s
		}
	}
}

func (ix *Index) forget(key string) {
	v, ok := ix.versions[key]
	if !ok {
		return
	}
	delete(ix.versions, key)
	delete(ix.byTenant[v.tenant], key)
	if len(ix.byTenant[v.tenant]) == 0 {
		delete(ix.byTenant, v.tenant)
	}
	if s := ix.vectors[v.tenant]; s != nil {
		if s.remove(v); s.live == 0 {
			delete(ix.vectors, v.tenant)
		}
	}
}

// load reads a record from store.db; nil when there is none.
func (ix *Index) load(key string) (*record, error) {
	var r *record
	err := ix.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketRecords).Get([]byte(key))
		if raw == nil {
			return nil
		}
		r = new(record)
		return gob.NewDecoder(bytes.NewReader(raw)).Decode(r)
	})
	return r, err
}

// store writes (or, with r nil, deletes) records and marks them dirty, in one transaction.
func (ix *Index) store(recs map[string]*record) error {
	return ix.db.Update(func(tx *bolt.Tx) error {
		b, d := tx.Bucket(bucketRecords), tx.Bucket(bucketDirty)
		for k, r := range recs {
			if err := d.Put([]byte(k), nil); err != nil {
				return err
			}
			if r == nil {
				if err := b.Delete([]byte(k)); err != nil {
					return err
				}
				continue
			}
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(r); err != nil {
				return err
			}
			if err := b.Put([]byte(k), buf.Bytes()); err != nil {
				return err
			}
		}
		return nil
	})
}

// clean clears the dirty marks of keys.
func (ix *Index) clean(keys ...string) error {
	return ix.db.Update(func(tx *bolt.Tx) error {
		d := tx.Bucket(bucketDirty)
		for _, k := range keys {
			if err := d.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
}
