-- What the provider said that the sync did not apply straight away (issue 35): an instance the
-- listing no longer shows but the provider never said was released, a price change too large to
-- trust without the renter, and an import whose bill looks wrong at first sight.

-- The first sync whose listing no longer showed the instance, while a direct look did not say it
-- was released. NULL when listed (or confirmed gone). Release is dated here once confirmed.
ALTER TABLE account_instances ADD COLUMN missing_since TEXT;

-- A provider price change of 3x or more (either way), held until `account accept`: the whole
-- instance's price per hour as a decimal string, its GPU count, the provider's currency, and the
-- first sync that saw it (the accepted change is dated there).
ALTER TABLE account_instances ADD COLUMN held_price_per_hour TEXT;
ALTER TABLE account_instances ADD COLUMN held_gpu_count INTEGER;
ALTER TABLE account_instances ADD COLUMN held_currency TEXT;
ALTER TABLE account_instances ADD COLUMN held_since TEXT;

-- The provider bills in another currency than the rental's rules: its price is never written into
-- them; this is the provider's price per hour and currency, shown beside the rules.
ALTER TABLE account_instances ADD COLUMN provider_price_per_hour TEXT;
ALTER TABLE account_instances ADD COLUMN provider_currency TEXT;

-- Why an import needs a look (it started long before the account was added, or its bill at import
-- is out of proportion), in plain words; NULL when nothing is odd.
ALTER TABLE account_instances ADD COLUMN import_warning TEXT;
