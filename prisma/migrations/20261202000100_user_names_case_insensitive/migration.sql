-- Issue 30: a username and an e-mail address each belong to one user, whatever their case, as in
-- balena (which lower-cases usernames at sign-up and at login, and compares addresses without
-- case). Unique indexes on lower(...) say so, and serve the logins that look users up that way.
--
-- A database may already hold two users whose usernames, or whose addresses, differ only in case.
-- Nothing of theirs is renamed or dropped here: the migration then stops, changing nothing (it runs
-- in one transaction), and names the users by id, so that an operator decides which to change
-- (README, "Users whose names differ only in case"), then starts fleetgate again.
DO $$
DECLARE
  clashes text;
BEGIN
  SELECT string_agg(clash, '; ' ORDER BY clash) INTO clashes FROM (
    SELECT 'users ' || string_agg("id"::text, ', ' ORDER BY "id") || ' share an e-mail address' AS clash
      FROM "user" GROUP BY lower("email") HAVING count(*) > 1
    UNION ALL
    SELECT 'users ' || string_agg("id"::text, ', ' ORDER BY "id") || ' share a username' AS clash
      FROM "user" GROUP BY lower("username") HAVING count(*) > 1
  ) AS found;
  IF clashes IS NOT NULL THEN
    RAISE EXCEPTION 'usernames and e-mail addresses must differ in more than case: %. Change all but one of each, then start again', clashes;
  END IF;
END
$$;

-- CreateIndex
CREATE UNIQUE INDEX "user_email_lower_key" ON "user"(lower("email"));

-- CreateIndex
CREATE UNIQUE INDEX "user_username_lower_key" ON "user"(lower("username"));
