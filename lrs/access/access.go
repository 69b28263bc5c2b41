// Package access holds who may do what in the xAPI record store: the principals requests
// authenticate as, their permission levels and OAuth scopes, the permissions those grant per
// resource, and the LRS accounts configured in a tenant's settings. It is plain Go: the HTTP
// layer resolves a principal, asks Permissions and Check, and translates the answer.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// ErrForbidden means the principal's permissions do not cover the operation.
var ErrForbidden = errors.New("forbidden")

// Level is the permission level of a principal.
type Level string

// The permission levels. DefaultPermissions maps them to Permissions; see docs/decisions.md
// "xAPI record store" and "OAuth 2.0 for the record store".
const (
	// Root reads and writes every statement and document of the tenant (any tenant for the
	// platform root credentials).
	Root Level = "root"
	// ReadWrite is an application: it writes any statement (the default write rule) and reads
	// every statement of its tenant. Tenant credentials have this level.
	ReadWrite Level = "readwrite"
	// ReadOnly reads every statement and document of its tenant and writes nothing.
	ReadOnly Level = "readonly"
	// Person has the spec's default permissions: it writes any statement about any actor
	// and reads only the statements it appears in (the default read rule). Launch tokens of
	// content have this level.
	Person Level = "person"
	// OAuth is an OAuth 2.0 client: its access token's scopes decide (ScopePermissions).
	OAuth Level = "oauth"
)

// Principal is who a record-store request authenticated as: the asserter of the statements
// it writes.
type Principal struct {
	// Name identifies the principal in logs and messages (account name, credential key,
	// OAuth client id).
	Name string
	// Tenant is the tenant the credential belongs to; "" means any tenant (platform root).
	Tenant string
	Level  Level
	// Authority is the agent recorded as the authority of the statements it writes.
	Authority json.RawMessage
	// IFI is the identity the default read rule matches ("account:<homePage>|<name>" form).
	IFI string
	// Launch is true for a launch token of content.
	Launch bool
	// LaunchSession is the player session a launch token was issued in: the statements it
	// stores are signs of life of that session (time tracked).
	LaunchSession string
	// CMI5 is the cmi5 AU session a launch token writes for, nil for any other principal.
	CMI5 *course.CMI5Session
	// Scopes are the OAuth scopes the access token grants (Level OAuth only).
	Scopes []string
}

// AccountPrincipal builds a principal whose authority is the account agent
// {homePage, name}.
func AccountPrincipal(homePage, name, tenantID string, level Level) *Principal {
	agent, _ := json.Marshal(map[string]any{"objectType": "Agent",
		"account": map[string]string{"homePage": homePage, "name": name}})
	return &Principal{Name: name, Tenant: tenantID, Level: level, Authority: agent,
		IFI: "account:" + homePage + "|" + name}
}

// Access is what a principal may do with one kind of document.
type Access uint8

// The document access levels.
const (
	NoAccess Access = iota
	ReadAccess
	ReadWriteAccess
)

// Permissions is what a principal may do within its tenant.
type Permissions struct {
	// Write allows storing statements.
	Write bool
	// Read allows reading the statements the principal appears in (actor, authority, group
	// member, instructor, team, context agent…) and the report extensions over them.
	Read bool
	// ReadAll extends Read to every statement of the tenant.
	ReadAll bool
	// State is the access to the state resource.
	State Access
	// Profiles is the access to the activity and agent profile resources.
	Profiles Access
	// Definitions allows reading the activities and agents resources.
	Definitions bool
	// Define lets the activity definitions of the statements it writes update the stored
	// canonical definitions; without it only the ids are kept (xAPI scope "define").
	Define bool
}

// everything is the permissions of root and of an application.
var everything = Permissions{Write: true, Read: true, ReadAll: true, State: ReadWriteAccess,
	Profiles: ReadWriteAccess, Definitions: true, Define: true}

// DefaultPermissions maps the levels (TinCanGetPermissions): root and readwrite read and
// write everything of their tenant, readonly reads everything, person has the default
// write and read rules and its documents, an OAuth client what its scopes grant.
func DefaultPermissions(p *Principal) Permissions {
	switch p.Level {
	case Root, ReadWrite:
		return everything
	case ReadOnly:
		return Permissions{Read: true, ReadAll: true, State: ReadAccess, Profiles: ReadAccess, Definitions: true}
	case Person:
		return Permissions{Write: true, Read: true, State: ReadWriteAccess, Profiles: ReadWriteAccess,
			Definitions: true, Define: true}
	case OAuth:
		return ScopePermissions(p.Scopes)
	}
	return Permissions{}
}

// Resource is one resource of the record store, as the permissions see it.
type Resource string

// The resources.
const (
	Statements      Resource = "statements"
	State           Resource = "state"
	ActivityProfile Resource = "activity profile"
	AgentProfile    Resource = "agent profile"
	Activities      Resource = "activities"
	Agents          Resource = "agents"
	// Reports are the report extensions: reads over statements.
	Reports Resource = "reports"
)

// Check says whether perm allows reading (write false) or changing r; the error wraps
// ErrForbidden and names what is missing.
func (perm Permissions) Check(r Resource, write bool) error {
	verb := "read"
	if write {
		verb = "write"
	}
	ok := false
	switch r {
	case Statements, Reports:
		ok = (write && perm.Write) || (!write && perm.Read)
	case State:
		ok = allows(perm.State, write)
	case ActivityProfile, AgentProfile:
		ok = allows(perm.Profiles, write)
	case Activities, Agents:
		ok = !write && perm.Definitions
	}
	if !ok {
		return fmt.Errorf("%w: may not %s %s", ErrForbidden, verb, r)
	}
	return nil
}

func allows(a Access, write bool) bool {
	if write {
		return a == ReadWriteAccess
	}
	return a >= ReadAccess
}

// equalConstantTime compares secrets without telling by its time how much matched.
func equalConstantTime(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// trimLower normalises a keyword.
func trimLower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
