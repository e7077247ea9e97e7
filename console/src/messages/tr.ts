// Every text the console shows, in Turkish (the earlier system served both); keys as en.ts's.
import type { Messages } from "./en.ts";

export const tr: Messages = {
  appName: "llmgw konsolu",
  skipToContent: "İçeriğe geç",
  nav: { overview: "Genel bakış", models: "Modeller", nodes: "Düğümler", usage: "Kullanım", tenancy: "Kiracılık", myKeys: "Anahtarlarım", playground: "Deneme alanı", pictures: "Resimler", mesh: "3B", guardrails: "Korkuluklar", mcp: "MCP sunucuları", audit: "Denetim", signOut: "Çıkış yap" },
  language: "Dil",
  loading: "Yükleniyor…",
  forbidden: "Rolünüz buna izin vermiyor",
  signedOut: "Oturumunuz kapandı: yeniden giriş yapın",
  notFound: "Böyle bir sayfa yok",
  signIn: { title: "Giriş yap", intro: "Şirket hesabınızla giriş yapın.", with: "Şununla giriş yap:", none: "Yapılandırılmış giriş sağlayıcısı yok; bir yöneticiye danışın.", failed: "Giriş sağlayıcıları listelenemedi" },
  overview: { title: "Genel bakış", models: "Modeller", nodes: "Düğümler", operations: "İşlemler", notifications: "Son bildirimler", noneRunning: "Bu konsoldan başlatılmış çalışan işlem yok", none: "Yok", running: "Çalışan işlemler", started: "Başladı" },
  col: {
    name: "Ad", ready: "Hazır", asked: "İstenen", versions: "Sürümler", weights: "Sürüm ağırlıkları", node: "Düğüm", gpus: "GPU'lar", lastHeard: "Son haber",
    replicas: "Kopyalar", state: "Durum", version: "Sürüm", engine: "Motor", address: "Adres", cordoned: "Kapatıldı", actions: "Eylemler",
    when: "Zaman", kind: "Tür", message: "İleti", project: "Proje", team: "Takım", prefix: "Önek", band: "Bant", revoked: "İptal edildi",
    created: "Oluşturuldu", keys: "Anahtarlar", org: "Kuruluş", models: "Modeller", expires: "Bitiş", status: "Durum", operation: "İşlem",
  },
  models: {
    title: "Modeller", serve: "Sun", scale: "Ölçekle", stop: "Durdur", replicas: "Kopyalar", version: "Sürüm (isteğe bağlı)", engine: "Motor (isteğe bağlı)",
    replicasInvalid: "Kopya sayısı 0 ile 1000 arasında bir tam sayı olmalı", versionInvalid: "Sürüm 1–64 harf, rakam, nokta, tire veya alt çizgidir",
    started: "İşlem başladı", upgrade: "Yükselt", canary: "Kanarya", toVersion: "Hedef sürüm", wave: "Dalga boyutu", weight: "Trafik payı (%)", for: "Değerlendirme süresi (ör. 5m)",
    weightInvalid: "Pay 0'dan büyük, 100'den küçük bir sayıdır", durationInvalid: "Süre ms, s, m veya h ile bir sayıdır (ör. 90s, 5m)", waveInvalid: "Dalga 1 ile 1000 arasında bir tam sayıdır",
    versionRequired: "Sürümü belirtin", rollout: "Yükseltme veya kanarya", pause: "Duraklat", resume: "Sürdür", abort: "İptal et", promote: "Terfi ettir", watch: "Temporal Web arayüzünde aç", progress: "İlerleme", noReplicas: "Kopya yok",
    explain: "Yerleşimi açıkla", placement: "Nereye yerleşir", needs: "Her kopya {gpus} GPU ve {gib} GiB boş bellek ister: {basis}", replicaOn: "Kopya {n}: {node}{gpus}", nothingFits: "Hiçbir yere sığmıyor:",
  },
  nodes: { title: "Düğümler", cordon: "Kapat", uncordon: "Aç", drain: "Boşalt", confirmDrain: "{id} düğümü boşaltılsın mı? Kopyaları başka yere taşınır.", memory: "bellek" },
  usage: {
    title: "Kullanım", dimension: "Gruplama", from: "Başlangıç", to: "Bitiş", show: "Göster", csv: "CSV indir", requests: "İstekler", tokens: "Belirteçler",
    cost: "Maliyet", gpuSeconds: "GPU-saniye", budgets: "Bütçeler", noData: "Bu aralıkta kullanım yok", chartOf: "{dimension} bazında günlük {measure}",
    day: "Gün", spentMoney: "Bu ay harcanan / bütçe", spentGpuHours: "Bu ay GPU-saat / bütçe",
    dimensions: { org: "kuruluş", team: "takım", project: "proje", person: "kişi", model: "model", key: "anahtar" },
  },
  tenancy: {
    title: "Kiracılık", orgs: "Kuruluşlar", teams: "Takımlar", projects: "Projeler", keys: "API anahtarları", newProject: "Yeni proje", newKey: "Yeni anahtar",
    create: "Oluştur", revoke: "İptal et", keyName: "Anahtar adı", team: "Takım (KURULUŞ/TAKIM)", project: "Proje", models: "Modeller (virgülle; boş: hepsi)",
    rotate: "Yenile", rotateHelp: "Şimdi yeni bir anahtar; eskisi bir saat daha çalışır",
  },
  keys: {
    title: "Anahtarlarım", create: "Anahtar oluştur", name: "Ad", shownOnce: "Bu anahtarı şimdi kopyalayın: yalnızca bir kez gösterilir.", copy: "Kopyala", copied: "Kopyalandı",
    revoke: "İptal et", none: "Henüz anahtarınız yok",
  },
  playground: {
    title: "Deneme alanı", key: "API anahtarı", keyHelp: "Sizin bir anahtarınız; yalnızca bu sekmede kalır.", makeKey: "Deneme anahtarı oluştur", model: "Model", noModels: "Bu anahtar hiçbir modeli kullanamaz",
    prompt: "İleti", send: "Gönder", stop: "Durdur", answer: "Yanıt", loadModels: "Modelleri yükle",
  },
  limits: {
    title: "Sınırlar ve bütçeler", set: "Sınırları ayarla", clear: "Temizle", rpm: "İstek/dk", tpm: "Belirteç/dk", concurrent: "Eşzamanlı", monthlyBudget: "Aylık bütçe",
    monthlyBudgetGpuHours: "Aylık GPU-saat", invalid: "0 veya daha büyük bir sayı (sayımlar için tam sayı)", nothing: "En az bir sınır girin",
    help: "Yalnızca doldurulan alanlar değişir; \"-\" birini temizler. Takım KURULUŞ/TAKIM, anahtar kimliğidir.",
  },
  people: {
    title: "Kişiler ve roller", person: "Kişi", choose: "Bir kişi seçin", memberships: "Üyelikler", scope: "Kapsam", scopeName: "Kapsam adı", role: "Rol",
    source: "Kaynak", add: "Üyelik ekle", remove: "Kaldır", none: "Üyelik yok",
  },
  logs: { title: "Motor günlükleri", show: "Günlük", stop: "Durdur", of: "Kopyanın günlüğü:", live: "canlı" },
  slurm: {
    title: "Slurm", llmgw: "llmgw'de", state: "Slurm'de", jobs: "İşler", lend: "Ödünç ver", reclaim: "Geri al", notLendable: "Ödünç verilemez",
    disabled: "Bu platformda Slurm etkin değil", confirmLend: "{id} düğümü Slurm'e ödünç verilsin mi? Önce kopyaları başka yere taşınır.",
  },
  pictures: { title: "Resimler", prompt: "Resmi tarif edin", size: "Boyut", make: "Resim yap", making: "Yapılıyor…", result: "Resim", noModels: "Bu anahtar hiçbir resim modelini kullanamaz" },
  mesh: { title: "3B", picture: "Resim", make: "Model yap", job: "İş", pictureNeeded: "Bir resim seçin", viewerAlt: "Tamamlanan 3B model" },
  admin: { remove: "Kaldır", notJson: "JSON değil" },
  guard: {
    title: "Korkuluklar", policies: "İlkeler", events: "Engellemeler ve işaretler (son gün)", scope: "Kapsam", rules: "Kurallar", updated: "Güncellendi",
    document: "İlke (JSON, ctl guard policy add'in aldığı gibi)", add: "İlke ekle", policy: "İlke", rule: "Kural", action: "Eylem",
  },
  mcp: { title: "MCP sunucuları", servers: "Sunucular", target: "URL veya komut", timeout: "Zaman aşımı", rate: "Çağrı/dk", test: "Sına", tools: "Araçlar", document: "Sunucu (JSON, ctl mcp add'in gönderdiği gibi)", add: "Sunucu ekle" },
  audit: {
    title: "Denetim", since: "Şu zamandan beri", source: "Kaynak", actor: "Kim", action: "Eylem", target: "Hedef", before: "Önce", after: "Sonra", older: "Daha eski olaylar", shown: "olay gösteriliyor, en yenisi önce",
    sources: { all: "hepsi", admin: "yönetim değişiklikleri", mcp: "MCP araç çağrıları" },
  },
};
