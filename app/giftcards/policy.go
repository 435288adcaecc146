package giftcards

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the gift cards context: a
// card is a loyalty balance, read with loyalty:read and moved with
// loyalty:write.
var Rules = kernel.NamedRules(struct {
	IssueGiftCards, LoadGiftCard, BindGiftCard, TransferGiftCard, CancelGiftCard kernel.Rule
	GiftCard, GiftCardByCode, GiftCards, GiftCardEntries, GiftCardConnection     kernel.Rule
	CustomerGiftCards, UpkeepGiftCards, PlaceCardHold                            kernel.Rule
}{
	IssueGiftCards:     kernel.Scope("loyalty:write"),
	LoadGiftCard:       kernel.Scope("loyalty:write"),
	BindGiftCard:       kernel.Scope("loyalty:write"),
	TransferGiftCard:   kernel.Scope("loyalty:write"),
	CancelGiftCard:     kernel.Scope("loyalty:write"),
	GiftCard:           kernel.Scope("loyalty:read"),
	GiftCardByCode:     kernel.Scope("loyalty:read"),
	GiftCards:          kernel.Scope("loyalty:read"),
	GiftCardEntries:    kernel.Scope("loyalty:read"),
	GiftCardConnection: kernel.Scope("loyalty:read"),
	CustomerGiftCards:  kernel.Internal,
	UpkeepGiftCards:    kernel.System,
	PlaceCardHold:      kernel.Internal,
})
