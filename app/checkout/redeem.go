package checkout

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/kernel"

	"github.com/riverqueue/river"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// RedeemInput redeems one campaign of a validation for an order.
type RedeemInput struct {
	CampaignID, CustomerID, OrderID, Token string
	AmountPaid                             decimal.Decimal
}

// Idempotency is an Idempotency-Key and the request it came with.
type Idempotency struct {
	Key         string
	RequestHash string
}

// Redeemed is a redemption's answer, as the transports render it: stored
// with an Idempotency-Key, in the redemption's transaction, so that a
// replay answers the same. The application stores it in a form of its own
// (JSON of these fields), never as a transport renders it.
type Redeemed struct {
	RedemptionID, CampaignID, CustomerID, OrderID string
	CampaignType                                  campaign.Type
	Benefit                                       eligibility.Benefit
	RedeemedAt                                    time.Time
}

// RedeemedOf is the answer of a redemption that carries its campaign.
func RedeemedOf(red *ent.Redemption) (*Redeemed, error) {
	var b eligibility.Benefit
	if err := json.Unmarshal(red.Benefit, &b); err != nil {
		return nil, err
	}
	return &Redeemed{RedemptionID: red.ID, CampaignID: red.CampaignID, CustomerID: red.CustomerID, OrderID: red.OrderID,
		CampaignType: red.Edges.Campaign.Type, Benefit: b, RedeemedAt: red.CreatedAt}, nil
}

// storedStatus fills the key's response_status, a column from when the
// stored answer was a REST body: a redemption's is always 201 (created).
const storedStatus = 201

// RequestHash fingerprints a request for Idempotency.
func RequestHash(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (in RedeemInput) validate() error {
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	kernel.RequireID(&p, "order_id", in.OrderID)
	if strings.TrimSpace(in.Token) == "" { // a token carries its cart: no length bound but the request's
		p.Add("validation_token", "is required")
	}
	if in.AmountPaid.IsNegative() || in.AmountPaid.Exponent() < -2 {
		p.Add("amount_paid", "must be a non-negative amount in R$ with at most 2 decimal places")
	}
	return p.Err()
}

// RedeemCampaign gives the benefit a validation promised for one campaign;
// the redemption carries its campaign. With idem, a repeated key returns
// the stored answer instead (a replay, and no redemption).
func (a *Service) RedeemCampaign(ctx context.Context, in RedeemInput, idem *Idempotency) (*ent.Redemption, *Redeemed, error) {
	if err := Rules.RedeemCampaign.Allow(ctx); err != nil {
		return nil, nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, nil, err
	}
	if err := in.validate(); err != nil {
		return nil, nil, err
	}
	v, _ := viewer.FromContext(ctx)
	var red *ent.Redemption
	var replay *Redeemed
	var bonus int64 // points the redemption credited, counted once committed
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		bonus = 0 // a run again after a conflict counts afresh
		if idem != nil {
			r, err := a.storedAnswer(ctx, tx.Ent, v.Subject, idem)
			if err != nil || r != nil {
				replay = r
				return err
			}
		}
		var err error
		if red, err = a.redeem(ctx, tx, in, &bonus); err != nil {
			return err
		}
		if idem == nil {
			return nil
		}
		answer, err := RedeemedOf(red)
		if err != nil {
			return err
		}
		body, err := json.Marshal(answer)
		if err != nil {
			return err
		}
		now := a.k.Now().UTC()
		// An expired answer of the same key gives way (the purge job may not
		// have reached it yet).
		if _, err := tx.Ent.IdempotencyKey.Delete().Where(idempotencykey.ClientID(v.Subject),
			idempotencykey.Key(idem.Key), idempotencykey.ExpiresAtLTE(now)).Exec(ctx); err != nil {
			return err
		}
		return tx.Ent.IdempotencyKey.Create().
			SetClientID(v.Subject).SetKey(idem.Key).SetRequestHash(idem.RequestHash).
			SetResponseStatus(storedStatus).SetResponseBody(body).
			SetCreatedAt(now).SetExpiresAt(now.Add(IdempotencyTTL)).
			Exec(ctx)
	})
	if idem != nil && err != nil && replay == nil {
		// A concurrent request with the same key may have committed first
		// (ours then failed on a unique index or a used token, and rolled
		// back whole): answer with its result.
		// Its key with another body is the client's reuse, whatever our
		// attempt met.
		stored, serr := a.storedAnswer(ctx, a.k.DB.Ent, v.Subject, idem)
		switch _, reused := apperr.As(serr); {
		case reused:
			err = serr
		case serr == nil && stored != nil:
			replay, err = stored, nil
		case serr == nil && ent.IsConstraintError(err):
			// The key's first request has not committed its answer yet.
			err = apperr.Conflict("idempotency_key_in_flight", "Idempotency-Key",
				"a request with this Idempotency-Key is in progress; retry it")
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if replay == nil {
		a.k.Recorder().Redemptions(kernel.SourceAPI, 1)
		a.k.Recorder().PointsCredited(kernel.SourceAPI, bonus)
	}
	return red, replay, nil
}

// storedAnswer returns the answer stored for the key, nil when there is
// none (or it expired), or an error when the key came with another request.
func (a *Service) storedAnswer(ctx context.Context, c *ent.Client, clientID string, idem *Idempotency) (*Redeemed, error) {
	k, err := c.IdempotencyKey.Query().Where(
		idempotencykey.ClientID(clientID), idempotencykey.Key(idem.Key),
		idempotencykey.ExpiresAtGT(a.k.Now().UTC()),
	).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if k.RequestHash != idem.RequestHash {
		return nil, &apperr.Error{Kind: apperr.KindInvalid, Code: "idempotency_key_reused", Field: "Idempotency-Key",
			Message: "this Idempotency-Key was used with another request"}
	}
	var answer Redeemed
	if err := json.Unmarshal(k.ResponseBody, &answer); err != nil {
		return nil, fmt.Errorf("the answer stored for Idempotency-Key %q: %w", idem.Key, err)
	}
	if answer.RedemptionID == "" {
		// A REST body, stored by a version before Redeemed (kept a day).
		return nil, fmt.Errorf("the answer stored for Idempotency-Key %q is not a Redeemed", idem.Key)
	}
	return &answer, nil
}

// redeemedBefore answers the error of a validation that already redeemed
// the campaign: for another order its token is used (whichever request saw
// it first, on either database), for the same order the campaign is
// redeemed; nil when it did not.
func redeemedBefore(ctx context.Context, c *ent.Client, tokenID string, in RedeemInput) error {
	prior, err := c.Redemption.Query().Where(
		redemption.ValidationTokenID(tokenID), redemption.CampaignID(in.CampaignID), redemption.RolledBackAtIsNil()).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case prior.OrderID != in.OrderID:
		return errTokenUsed
	}
	return apperr.Conflict("already_redeemed", "campaign_id", "this validation already redeemed the campaign as "+prior.ID)
}

// errTokenUsed answers a token bound to another order.
var errTokenUsed = tokenError("validation_token_used", "validation_token", "the validation token already served another order")

// bindToken binds the token to the order, given its row as redeem read it
// (nil before its first redemption): the first redemption writes the row
// (its id is the key: a token has one), one after a rollback sets the order
// again, a later one of the same order has nothing to do. The customer's row
// is locked, so the redemptions of one token are judged one after the other;
// a concurrent write the key or the condition refused anyway has the
// transaction run again, to read the row.
func bindToken(ctx context.Context, c *ent.Client, tok *validationToken, row *ent.ValidationToken, orderID string) error {
	switch {
	case row == nil:
		create := c.ValidationToken.Create().
			SetID(tok.ID).SetCustomerID(tok.CustomerID).SetChannel(tok.Channel).SetStoreID(tok.StoreID).
			SetCreatedAt(tok.ExpiresAt.Add(-ValidationTTL)).SetExpiresAt(tok.ExpiresAt).SetOrderID(orderID)
		if tok.CouponID != "" {
			create.SetCouponID(tok.CouponID)
		}
		err := create.Exec(ctx)
		if ent.IsConstraintError(err) {
			return storage.ErrConflict
		}
		return err
	case row.OrderID == nil:
		bound, err := c.ValidationToken.Update().Where(validationtoken.ID(tok.ID), validationtoken.OrderIDIsNil()).
			SetOrderID(orderID).Save(ctx)
		if err == nil && bound == 0 {
			return storage.ErrConflict
		}
		return err
	}
	return nil // bound to this order already (redeem refused another's)
}

func tokenError(code, field, message string) error {
	return &apperr.Error{Kind: apperr.KindInvalid, Code: code, Field: field, Message: message}
}

// redeem does the work of RedeemCampaign inside its transaction.
// The bonus points it credits at once go to *bonus.
func (a *Service) redeem(ctx context.Context, tx storage.Tx, in RedeemInput, bonus *int64) (*ent.Redemption, error) {
	now := a.k.Stamp()
	tok, err := openToken(ctx, in.Token)
	switch {
	case err != nil:
		return nil, err
	case !now.Before(tok.ExpiresAt):
		return nil, tokenError("validation_token_expired", "validation_token", "the validation token has expired; validate the cart again")
	case tok.CustomerID != in.CustomerID:
		return nil, apperr.Invalid("customer_id", "is not the customer the validation token was issued for")
	case !slices.Contains(tok.Campaigns, in.CampaignID):
		return nil, notEligible(tok, in.CampaignID)
	}
	row, err := tx.Ent.ValidationToken.Get(ctx, tok.ID)
	switch {
	case ent.IsNotFound(err):
		row = nil // its first redemption
	case err != nil:
		return nil, err
	case row.OrderID != nil && *row.OrderID != in.OrderID:
		return nil, errTokenUsed
	}
	if err := redeemedBefore(ctx, tx.Ent, tok.ID, in); err != nil {
		return nil, err
	}
	cust, err := a.k.LockCustomer(ctx, tx.Ent, in.CustomerID)
	if err != nil {
		return nil, err
	}
	camp, err := tx.Ent.Campaign.Get(ctx, in.CampaignID)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("campaign")
	}
	if err != nil {
		return nil, err
	}
	if camp.LimitPerCustomer != nil {
		// Counting is safe here: the customer row is locked (PostgreSQL) or
		// the database write-locked (SQLite) until commit.
		n, err := tx.Ent.Redemption.Query().Where(redemption.CampaignID(camp.ID), redemption.CustomerID(cust.ID),
			redemption.RolledBackAtIsNil()).Count(ctx)
		if err != nil {
			return nil, err
		}
		if n >= *camp.LimitPerCustomer {
			return nil, apperr.Conflict("redemption_limit_reached", "limits.per_customer", "the customer has reached this campaign's limit")
		}
	}
	// One conditional update takes a redemption from the total limit of a
	// campaign active now, or takes nothing.
	claimed, err := campaigns.ClaimRedemption(ctx, tx.Ent, camp.ID, campaignrules.WhereStatusAt(campaign.StatusActive, now))
	if err != nil {
		return nil, err
	}
	if !claimed {
		if campaignrules.StatusAt(camp, now) != campaign.StatusActive {
			return nil, tokenError("campaign_not_active", "campaign_id", "the campaign is not active")
		}
		return nil, apperr.Conflict("redemption_limit_reached", "limits.total", "the campaign has reached its total limit")
	}
	if err := checkStacking(ctx, tx.Ent, camp, in); err != nil {
		return nil, err
	}
	if camp.RequiresCode {
		if tok.CouponID == "" {
			return nil, notEligible(tok, camp.ID)
		}
		if err := campaigns.UseCoupon(ctx, tx.Ent, tok.CouponID, camp.ID, now); err != nil {
			return nil, err
		}
	}
	benefit, err := promisedBenefit(tok, camp)
	if err != nil {
		return nil, err
	}
	if err := a.Campaigns.SpendBudget(ctx, tx.Ent, campaignrules.Of(camp), tok.StoreID, benefit.Amount, now, true); err != nil {
		return nil, err
	}
	if err := bindToken(ctx, tx.Ent, tok, row, in.OrderID); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(benefit)
	if err != nil {
		return nil, err
	}
	create := tx.Ent.Redemption.Create().
		SetCampaignID(camp.ID).SetCustomerID(cust.ID).SetOrderID(in.OrderID).SetValidationTokenID(tok.ID).
		SetAmountPaid(in.AmountPaid).SetBenefit(raw).SetCreatedAt(now).SetStoreCode(tok.StoreID).
		SetDiscountAmount(decimal.Zero).SetCashbackAmount(decimal.Zero)
	if camp.RequiresCode {
		create.SetCouponID(tok.CouponID)
	}
	if benefit.DiscountAmount != nil {
		create.SetDiscountAmount(*benefit.DiscountAmount)
	}
	if benefit.CashbackAmount != nil {
		create.SetCashbackAmount(*benefit.CashbackAmount)
	}
	if benefit.BonusPoints != nil {
		create.SetBonusPoints(*benefit.BonusPoints)
	}
	red, err := create.Save(ctx)
	if err == nil {
		red.Edges.Campaign = camp
	}
	if ent.IsConstraintError(err) {
		// A concurrent redemption of the same validation and campaign won
		// (this transaction is aborted: read what it committed outside).
		if err := redeemedBefore(ctx, a.k.DB.Ent, tok.ID, in); err != nil {
			return nil, err
		}
		return nil, apperr.Conflict("already_redeemed", "campaign_id", "this validation already redeemed the campaign")
	}
	if err != nil {
		return nil, err
	}
	if err := campaigns.RecordRedemption(ctx, tx.Ent, red); err != nil {
		return nil, err
	}
	switch camp.Type {
	case campaign.TypeCashback:
		if benefit.CashbackAmount != nil && benefit.CashbackAmount.IsPositive() {
			err = a.scheduleCashback(ctx, tx.SQL, red, camp, now)
		}
	case campaign.TypeBonusPoints:
		*bonus, err = a.creditBonusIfOrderCredited(ctx, tx.Ent, red)
	case campaign.TypeDiscount, campaign.TypeGift: // given at checkout: nothing to schedule
	}
	return red, err
}

// notEligible is the error of redeeming a campaign the validation did not
// find eligible: excluded by the stacking rules, or not eligible at all.
func notEligible(tok *validationToken, campaignID string) error {
	if by, ok := tok.Excluded[campaignID]; ok {
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "campaign_excluded", Field: "campaign_id",
			Message: "the stacking rules exclude this campaign from the order: campaign " + by + " applies instead"}
	}
	return tokenError("campaign_not_eligible", "campaign_id", "the validation did not find this campaign eligible")
}

// checkStacking refuses a redemption the stacking rules exclude given the
// order's other redemptions (of this validation or another): an exclusive
// campaign is redeemed alone. The customer's row is locked, so concurrent
// redemptions of one order are judged one after the other. It reads in the
// transaction only: a read on another connection (the campaigns' cache)
// could wait for a pool the concurrent transactions hold.
func checkStacking(ctx context.Context, c *ent.Client, camp *ent.Campaign, in RedeemInput) error {
	others, err := c.Redemption.Query().Where(redemption.CustomerID(in.CustomerID), redemption.OrderID(in.OrderID),
		redemption.RolledBackAtIsNil(), redemption.CampaignIDNEQ(camp.ID)).
		WithCampaign(func(q *ent.CampaignQuery) { q.Select(campaign.FieldStacking) }).All(ctx)
	if err != nil {
		return err
	}
	exclusive := func(c *ent.Campaign) bool { return c.Stacking != nil && *c.Stacking == campaign.StackingExclusive }
	for _, o := range others {
		if exclusive(camp) || exclusive(o.Edges.Campaign) {
			return &apperr.Error{Kind: apperr.KindInvalid, Code: "campaign_excluded", Field: "campaign_id",
				Message: "the stacking rules exclude this campaign from the order: an exclusive campaign applies alone, and the order redeemed " + o.CampaignID}
		}
	}
	return nil
}

// promisedBenefit is the benefit validate estimated for the campaign,
// recomputed from the cart and earning rate the token carries.
func promisedBenefit(tok *validationToken, camp *ent.Campaign) (eligibility.Benefit, error) {
	b, ok := eligibility.Estimate(campaignrules.Of(camp), tok.Cart, tok.PointsPerReal)
	if !ok {
		return eligibility.Benefit{}, errors.New("validation token lists a campaign no item of its cart applies to")
	}
	return b, nil
}

// scheduleCashback enqueues the cashback credit in the redemption's
// transaction, credit_after_days from now.
func (a *Service) scheduleCashback(ctx context.Context, tx *sql.Tx, red *ent.Redemption, camp *ent.Campaign, now time.Time) error {
	opts := &river.InsertOpts{}
	if camp.CreditAfterDays != nil && *camp.CreditAfterDays > 0 {
		opts.ScheduledAt = now.AddDate(0, 0, *camp.CreditAfterDays)
	}
	rc, err := a.k.Jobs()
	if err != nil {
		return err
	}
	_, err = rc.InsertTx(ctx, tx, jobs.CreditCashback{TenantID: red.TenantID, RedemptionID: red.ID}, opts)
	return err
}

// creditBonusIfOrderCredited credits a bonus-points redemption at once when
// its order's points are already credited; otherwise CreditPoints does. It
// returns the points it credited.
func (a *Service) creditBonusIfOrderCredited(ctx context.Context, c *ent.Client, red *ent.Redemption) (int64, error) {
	credited, err := c.PointsEntry.Query().Where(
		pointsentry.CustomerID(red.CustomerID), pointsentry.KindEQ(pointsentry.KindCredit),
		pointsentry.SourceKindEQ(pointsentry.SourceKindOrder), pointsentry.SourceID(red.OrderID),
	).Exist(ctx)
	if err != nil || !credited {
		return 0, err
	}
	return a.Loyalty.CreditBonus(ctx, c, red)
}
