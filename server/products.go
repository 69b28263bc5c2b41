package server

import (
	"github.com/valyala/fasthttp"

	"github.com/lectern-lms/lectern/server/console"
	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/server/engineapi"
	"github.com/lectern-lms/lectern/server/lrsapi"
	"github.com/lectern-lms/lectern/server/player"
)

// Each product's Deps, from this package's: cmd/lectern builds one Deps for the whole HTTP
// layer, each product gets the part it uses.

func (s *Server) contentDeps() contentapi.Deps {
	d := s.deps
	return contentapi.Deps{Tenants: d.Tenants, Jobs: d.Jobs, Queue: d.Queue, IndexQueue: d.IndexQueue, Blobs: d.Blobs,
		Content: d.Content, Fields: d.ContentFields, Config: d.ContentConfig, Taxonomies: d.Taxonomies,
		Search:        contentapi.Search{Index: d.Index, Embedder: d.Embedder, Unavailable: d.NoEmbedder},
		Subscriptions: d.Subscriptions, Outbound: d.Outbound, Logger: s.log}
}

func (s *Server) lrsDeps() lrsapi.Deps {
	d := s.deps
	return lrsapi.Deps{Tenants: d.Tenants, Root: d.Root, Guard: d.Guard, Statements: d.Statements, Settings: d.Settings,
		Forward: d.Forward, OAuth: d.OAuth, LaunchTokens: d.LaunchTokens, Hooks: d.LRS, PublicURL: d.PublicURL,
		DefaultVersion: d.XAPIDefaultVersion, Logger: s.log,
		// The learner's part of a statement write (lrs.go).
		Counted: s.statementsStored, Engine: s.deps.Learner}
}

func (s *Server) consoleDeps() console.Deps {
	return console.Deps{
		// s.handler is taken once every route is registered, after the console's.
		Dispatch: func(fc *fasthttp.RequestCtx) { s.handler(fc) },
		SignIn:   s.principalFor, Guard: s.deps.Guard, PreAuth: s.deps.PreAuth, Sealer: s.deps.ConsoleSealer, QueueConsole: s.deps.QueueConsole != nil,
		UploadLimit: int64(s.deps.BodyLimit), Logger: s.log}
}

func (s *Server) engineDeps() engineapi.Deps {
	d := s.deps
	return engineapi.Deps{Courses: d.Courses, Registrations: d.Registrations, Runtime: d.Runtime, Settings: d.Settings,
		Learner: d.Learner, Queue: d.Queue, Blobs: d.Blobs, Outbound: d.Outbound, Launch: d.Launch, PlayerURL: s.playerOrigin(), Logger: s.log}
}

// playerOrigin is where the player runs: the content origin, or the API's when there is none.
func (s *Server) playerOrigin() string {
	if s.deps.ContentURL != "" {
		return s.deps.ContentURL
	}
	return s.deps.PublicURL
}

func (s *Server) playerDeps() player.Deps {
	d := s.deps
	return player.Deps{Tenants: d.Tenants, Courses: d.Courses, Registrations: d.Registrations, Settings: d.Settings,
		Blobs: d.Blobs, Launch: d.Launch, LaunchTokens: d.LaunchTokens, Learner: d.Learner, PublicURL: d.PublicURL,
		ContentURL: d.ContentURL}
}
