package server

import (
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/server/lrsapi"
)

// The xAPI record store's HTTP side is server/lrsapi. These names stay for cmd/lectern and
// the tests; the learner's part of a statement write is learner.Service (lrsapi.Engine).

// LRSBase is the mount path of the xAPI record store (lrsapi.Base).
const LRSBase = lrsapi.Base

// OAuthTokenPath is the record store's OAuth 2.0 token endpoint (lrsapi.OAuthTokenPath).
const OAuthTokenPath = lrsapi.OAuthTokenPath

// LRSHooks are the record store's extension points (lrsapi.Hooks).
type LRSHooks = lrsapi.Hooks

// LRSPrincipal is who an LRS request authenticated as (lrs/access.Principal).
type LRSPrincipal = access.Principal

// LRSPermissions is what a principal may do within its tenant (lrs/access.Permissions).
type LRSPermissions = access.Permissions

// LRSAccount is one basic-auth account of the LRS configured in a tenant's settings
// (lrs/access.Account).
type LRSAccount = access.Account

// The permission levels of lrs/access.
const (
	LRSRoot      = access.Root
	LRSReadWrite = access.ReadWrite
	LRSReadOnly  = access.ReadOnly
	LRSPerson    = access.Person
)

// ParseLRSAccounts parses the value of TinCanBasicAccounts or xAPIBasicAccounts
// (lrs/access.ParseAccounts).
func ParseLRSAccounts(value string) ([]LRSAccount, error) { return access.ParseAccounts(value) }
