package subscription_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/content/subscription"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/record/recordstores"
)

func sp(s string) *string { return &s }

// TestStore: secrets are sealed in the records and come back in clear; a configuration in use
// cannot be deleted; the delivery log records an attempt once and goes with its subscription;
// a tenant sees only its own records.
func TestStore(t *testing.T) {
	for _, b := range recordstores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			recs := b.Open(t)
			sealer, err := settings.NewSealer("test")
			if err != nil {
				t.Fatal(err)
			}
			s := &subscription.Store{Records: recs, Sealer: sealer}
			a := &subscription.Auth{Tenant: "t1", Type: subscription.AuthOAuth2, Key: sp("client"), Secret: sp("very-secret-value"),
				Scope: sp("x"), TokenURL: sp("https://auth.example.com/token")}
			if err := s.CreateAuth(ctx, a); err != nil {
				t.Fatal(err)
			}
			sub := &subscription.Subscription{Tenant: "t1", Topic: subscription.TopicJobProcessed, URL: "https://hooks.example.com/", AuthConfigID: a.ID}
			if err := s.CreateSubscription(ctx, sub); err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{subscription.KindAuth, subscription.KindSubscription} {
				rs, err := record.All(ctx, recs, record.Query{Tenant: "t1", Kind: kind})
				if err != nil || len(rs) != 1 {
					t.Fatalf("%s records: %d, %v", kind, len(rs), err)
				}
				if strings.Contains(string(rs[0].Data), "very-secret-value") || strings.Contains(string(rs[0].Data), sub.Secret) {
					t.Fatalf("%s record holds a secret in clear: %s", kind, rs[0].Data)
				}
			}
			got, err := s.GetAuth(ctx, "t1", a.ID)
			if err != nil || got.Secret == nil || *got.Secret != "very-secret-value" {
				t.Fatalf("GetAuth: %+v, %v", got, err)
			}
			gs, err := s.GetSubscription(ctx, "t1", sub.ID)
			if err != nil || gs.Secret != sub.Secret || len(sub.Secret) != 64 {
				t.Fatalf("GetSubscription: %+v, %v", gs, err)
			}
			if _, err := s.GetSubscription(ctx, "t2", sub.ID); !errors.Is(err, subscription.ErrNotFound) {
				t.Fatalf("another tenant reads the subscription: %v", err)
			}
			if err := s.DeleteAuth(ctx, "t1", a.ID); !errors.Is(err, subscription.ErrInUse) {
				t.Fatalf("delete in use: %v", err)
			}
			for _, d := range []subscription.Delivery{{MessageID: "m", Attempt: 1, Status: 500, Error: "x"}, {MessageID: "m", Attempt: 1, Status: 500},
				{MessageID: "m", Attempt: 2, Status: 204, Final: true}} {
				if err := s.LogDelivery(ctx, "t1", sub.ID, d); err != nil {
					t.Fatal(err)
				}
			}
			log, err := s.Deliveries(ctx, "t1", sub.ID)
			if err != nil || len(log) != 2 || log[0].Attempt != 1 || log[0].Error != "x" || !log[1].Final {
				t.Fatalf("log: %+v, %v", log, err)
			}
			if err := s.DeleteSubscription(ctx, "t1", sub.ID); err != nil {
				t.Fatal(err)
			}
			if rs, _ := record.All(ctx, recs, record.Query{Tenant: "t1", Kind: subscription.KindDelivery}); len(rs) != 0 {
				t.Fatalf("%d delivery records outlived their subscription", len(rs))
			}
			if err := s.DeleteAuth(ctx, "t1", a.ID); err != nil {
				t.Fatalf("delete unused: %v", err)
			}
			if err := s.DeleteAuth(ctx, "t1", a.ID); !errors.Is(err, subscription.ErrNotFound) {
				t.Fatalf("delete twice: %v", err)
			}
		})
	}
}
