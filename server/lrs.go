package server

import (
	"context"

	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/server/lrsapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The xAPI record store's HTTP side is server/lrsapi. These names stay for cmd/lectern and
// the tests; afterStatements is the learner's part of a statement write.

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

// afterStatements is the record store's AfterStore hook: the learner's part of a statement
// write (the player session a launch credential keeps alive, the rollup of xAPI and cmi5
// registrations).
func (s *Server) afterStatements(ctx context.Context, tenant string, p *LRSPrincipal, batch []*statements.Statement) {
	if p != nil {
		s.deps.Learner.StatementSession(ctx, tenant, p.LaunchSession)
	}
	s.deps.Learner.StatementsStored(ctx, tenant, batch)
}
