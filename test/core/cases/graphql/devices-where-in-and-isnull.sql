SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."note", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" = ANY($1::int8[])) AND ("t0"."note" IS NOT NULL)
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."note" AS "note") AS o)::text AS body
-- params: [[1,2,3,61,62]]
