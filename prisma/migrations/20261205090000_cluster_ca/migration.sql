-- The agent protocol's cluster CA: the row with id 1, its key sealed under the cluster token.
CREATE TABLE "cluster_ca" (
    "id" INTEGER NOT NULL,
    "cert_pem" TEXT NOT NULL,
    "key_sealed" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cluster_ca_pkey" PRIMARY KEY ("id")
);
