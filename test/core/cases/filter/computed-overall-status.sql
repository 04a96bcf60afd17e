SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."is_active", "t0"."is_online", "t0"."last_connectivity_event", "t0"."provisioning_progress", "t0"."download_progress", "t0"."status", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (CASE WHEN NOT "t0"."is_active" THEN 'inactive' WHEN NOT "t0"."is_online" AND "t0"."last_connectivity_event" IS NULL THEN 'configuring' WHEN "t0"."provisioning_progress" IS NOT NULL THEN 'configuring' WHEN NOT "t0"."is_online" THEN 'offline' WHEN "t0"."download_progress" IS NOT NULL OR "t0"."status" IN ('Downloading', 'Installing') THEN 'updating' ELSE 'idle' END = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN NOT "t0"."is_active" THEN 'inactive' WHEN NOT "t0"."is_online" AND "t0"."last_connectivity_event" IS NULL THEN 'configuring' WHEN "t0"."provisioning_progress" IS NOT NULL THEN 'configuring' WHEN NOT "t0"."is_online" THEN 'offline' WHEN "t0"."download_progress" IS NOT NULL OR "t0"."status" IN ('Downloading', 'Installing') THEN 'updating' ELSE 'idle' END AS "overall_status") AS o)::text AS body
-- params: ["updating"]
