tracefold-trace 5
world 25
lossy -
sites 12
site 0 app_adi_mp+0x11a8 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 1 app_adi_mp+0x15de libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 2 app_adi_mp+0x1616 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 3 app_adi_mp+0x1658 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 4 app_adi_mp+0x1b58 app_adi_mp+0x1668 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 5 app_adi_mp+0x1d92 app_adi_mp+0x1668 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 6 app_adi_mp+0x1b58 app_adi_mp+0x1673 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 7 app_adi_mp+0x1d92 app_adi_mp+0x1673 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 8 app_adi_mp+0x1b58 app_adi_mp+0x167e libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 9 app_adi_mp+0x1d92 app_adi_mp+0x167e libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 10 app_adi_mp+0x16c4 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 11 app_adi_mp+0x17af libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
modules 2
module app_adi_mp base=0x0 build-id=8757750fd6989381e65b6b6f85ea67b59dcfb5f9 path=/work/main/build/tests/apps/app_adi_mp
module libc.so.6 base=0x0 build-id=93ac61ec5a8eb1396f9fbd350e3169a558528a40 path=/usr/lib/x86_64-linux-gnu/libc.so.6
comms 1
comm 0 members *
nodes 12
node 0 MPI_Init site=0 ranks=*
  count 1 @ *
  time pred=start
    compute n=25 sum=0 min=0@0 max=0@0 bins=0:25:0:0:0
    comm n=25 sum=48858445589 min=1298893994@23 max=2613930972@1 bins=30:16:1298893994:2139833143:27279941072,31:9:2169382878:2613930972:21578504517
node 1 MPI_Irecv site=1 ranks=*
  loop 0 members 10 @ *
  loop 0 iters 50 @ *
  loop 1 members 2*50 @ *
  loop 1 iters 6*50 @ *
  count 1*300 @ *
  field peer (4 1 20 5 6 24)*50 @ <1 0 5 5> ; (24 1 20 5 6 19)*50 @ <2 1 5 5 3 1> ; (24 21 20 5 1 19)*50 @ <1 4 5 5>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 720*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Init/0
    compute n=25 sum=1938971 min=35293@14 max=149743@1 span=2 bins=14:9:35293:52308:385227,16:16:83184:149743:1553744
    comm n=25 sum=811160 min=6219@18 max=66128@0 span=4 bins=12:24:6219:60510:745032,16:1:66128:66128:66128
    stat compute_cpu n=25 sum=1890963 min=33851@14 max=146890@1 span=2 bins=14:9:33851:49745:367731,16:16:81651:146890:1523232
  time pred=MPI_Isend/2
    compute n=6250 sum=16473414 min=2243@18 max=107259@0 span=8 bins=8:6248:2243:62783:16269792,16:2:96363:107259:203622
    comm n=6250 sum=29647518 min=110@3 max=250132@1 span=16 bins=0:6217:110:60650:24992340,16:33:66949:250132:4655178
    stat compute_cpu n=6250 sum=9609897 min=1192@1 max=105738@0 span=8 bins=8:6248:1192:61591:9409488,16:2:94671:105738:200409
  time pred=MPI_Allreduce/10
    compute n=1225 sum=25787464 min=15833@23 max=3850945@0 span=8 bins=8:1217:15833:59439:21282896,16:8:71867:3850945:4504568
    comm n=1225 sum=7821035 min=661@18 max=124545@13 span=8 bins=8:1223:661:63735:7625405,16:2:71085:124545:195630
    stat compute_cpu n=1225 sum=19865457 min=14612@1 max=133650@18 span=4 bins=12:1221:14612:64956:19498149,16:4:70315:133650:367308
node 2 MPI_Isend site=2 ranks=*
  count 1*300 @ *
  field peer (1 4 5 20 24 6)*50 @ <1 0 5 5> ; (1 24 5 20 19 6)*50 @ <2 1 5 5 3 1> ; (21 24 5 20 19 1)*50 @ <1 4 5 5>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 720*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Irecv/1
    compute n=7500 sum=9668352 min=1071@1 max=84575@12 span=8 bins=8:7498:1071:65407:9507464,16:2:76313:84575:160888
    comm n=7500 sum=18615061 min=321@16 max=373816@23 span=8 bins=8:7471:321:55092:13813879,16:29:78617:373816:4801182
    stat compute_cpu n=7500 sum=1312236 min=20@1 max=82662@12 span=16 bins=0:7498:20:40752:1154692,16:2:74882:82662:157544
node 3 MPI_Waitall site=3 ranks=*
  count 1*50 @ *
  field list links (12 12 10 8 6 4 2 11 9 7 5 3 1)*50 @ *
  time pred=MPI_Isend/2
    compute n=1250 sum=1742784 min=1152@23 max=4176@19 span=2 bins=10:1249:1152:3415:1738608,12:1:4176:4176:4176
    comm n=1250 sum=21876816250 min=321568@22 max=155635221@11 span=8 bins=16:875:321568:16770075:6927429250,24:375:16780971:155635221:14949387000
    stat compute_cpu n=1250 sum=391100 min=110@3 max=2974@19 span=4 bins=4:576:110:252:133632,8:674:260:2974:257468
node 4 MPI_Sendrecv site=4 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 4*50 @ *
  count 1*200 @ *
  field peer 1*200 @ <2 0 5 5 4 1> ; 21*200 @ <1 4 5 5>
  field rpeer 4*200 @ <1 0 5 5> ; 24*200 @ <2 1 5 5 4 1>
  field tag 10*200 @ *
  field count 720*200 @ *
  field dtype 14*200 @ *
  field dsize 8*200 @ *
  field rcount 720*200 @ *
  field rdtype 14*200 @ *
  field rdsize 8*200 @ *
  field comm 0*200 @ *
  field rtag 10*200 @ *
  time pred=other
    compute n=5000 sum=24668870 min=2303@0 max=170523@21 span=8 bins=8:4995:2303:56254:24040935,16:5:67671:170523:627935
    comm n=5000 sum=42211923188 min=22484@24 max=136226980@7 span=16 bins=0:4:22484:52388:149644,16:4996:74290:136226980:42211773544
    stat compute_cpu n=5000 sum=18050440 min=1152@16 max=168111@21 span=8 bins=8:4995:1152:54522:17432550,16:5:66109:168111:617890
node 5 MPI_Sendrecv site=5 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 4*50 @ *
  count 1*200 @ *
  field peer 4*200 @ <1 0 5 5> ; 24*200 @ <2 1 5 5 4 1>
  field rpeer 1*200 @ <2 0 5 5 4 1> ; 21*200 @ <1 4 5 5>
  field tag 11*200 @ *
  field count 720*200 @ *
  field dtype 14*200 @ *
  field dsize 8*200 @ *
  field rcount 720*200 @ *
  field rdtype 14*200 @ *
  field rdsize 8*200 @ *
  field comm 0*200 @ *
  field rtag 11*200 @ *
  time pred=MPI_Sendrecv/4
    compute n=1250 sum=7422100 min=4787@4 max=72458@15 span=4 bins=12:1248:4787:42543:7278336,16:2:71306:72458:143764
    comm n=1250 sum=9652778168 min=89733@1 max=104870662@5 span=8 bins=16:1086:89733:16567474:3710631768,24:164:17438929:104870662:5942146400
    stat compute_cpu n=1250 sum=5727577 min=3676@4 max=70856@15 span=8 bins=8:1249:3676:41081:5656721,16:1:70856:70856:70856
  time pred=MPI_Sendrecv/5
    compute n=3750 sum=20646402 min=4296@6 max=86559@17 span=4 bins=12:3747:4296:58006:20409909,16:3:73759:86559:236493
    comm n=3750 sum=25850854813 min=52699@16 max=107725653@9 span=16 bins=0:1:52699:52699:52699,16:3749:73179:107725653:25850802114
    stat compute_cpu n=3750 sum=15713880 min=3165@11 max=85078@17 span=8 bins=8:3747:3165:56675:15482604,16:3:71787:85078:231276
node 6 MPI_Sendrecv site=6 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 4*50 @ *
  count 1*200 @ *
  field peer 5*200 @ *
  field rpeer 20*200 @ *
  field tag 20*200 @ *
  field count 720*200 @ *
  field dtype 14*200 @ *
  field dsize 8*200 @ *
  field rcount 720*200 @ *
  field rdtype 14*200 @ *
  field rdsize 8*200 @ *
  field comm 0*200 @ *
  field rtag 20*200 @ *
  time pred=other
    compute n=5000 sum=26809978 min=3856@12 max=258854@0 span=8 bins=8:4994:3856:55813:26048704,16:6:67631:258854:761274
    comm n=5000 sum=48695511953 min=26089@9 max=406909460@14 span=16 bins=0:7:26089:64376:300825,16:4993:72027:406909460:48695211128
    stat compute_cpu n=5000 sum=20250990 min=2704@22 max=256532@0 span=8 bins=8:4994:2704:53290:19521546,16:6:66059:256532:729444
node 7 MPI_Sendrecv site=7 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 4*50 @ *
  count 1*200 @ *
  field peer 20*200 @ *
  field rpeer 5*200 @ *
  field tag 21*200 @ *
  field count 720*200 @ *
  field dtype 14*200 @ *
  field dsize 8*200 @ *
  field rcount 720*200 @ *
  field rdtype 14*200 @ *
  field rdsize 8*200 @ *
  field comm 0*200 @ *
  field rtag 21*200 @ *
  time pred=MPI_Sendrecv/6
    compute n=1250 sum=7047845 min=4697@3 max=28383@13 span=2 bins=12:1245:4697:16244:6940875,14:5:16965:28383:106970
    comm n=1250 sum=8726598415 min=68913@18 max=179754544@18 span=8 bins=16:1135:68913:16504880:3390965725,24:115:18158689:179754544:5335632690
    stat compute_cpu n=1250 sum=5428872 min=3525@3 max=27030@13 span=4 bins=8:679:3525:4087:2597854,12:571:4097:27030:2831018
  time pred=MPI_Sendrecv/7
    compute n=3750 sum=22497630 min=4036@0 max=3049123@5 span=8 bins=8:3744:4036:61802:18877248,16:6:66349:3049123:3620382
    comm n=3750 sum=26872728053 min=21813@22 max=226466983@23 span=16 bins=0:2:21813:63464:85277,16:3748:66909:226466983:26872642776
    stat compute_cpu n=3750 sum=14582943 min=2945@0 max=223183@7 span=8 bins=8:3747:2945:64817:14186142,16:3:85688:223183:396801
node 8 MPI_Sendrecv site=8 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 4*50 @ *
  count 1*200 @ *
  field peer 24*200 @ <1 0 5 5> ; 19*200 @ <2 1 5 5 4 1>
  field rpeer 6*200 @ <2 0 5 5 4 1> ; 1*200 @ <1 4 5 5>
  field tag 30*200 @ *
  field count 720*200 @ *
  field dtype 14*200 @ *
  field dsize 8*200 @ *
  field rcount 720*200 @ *
  field rdtype 14*200 @ *
  field rdsize 8*200 @ *
  field comm 0*200 @ *
  field rtag 30*200 @ *
  time pred=MPI_Sendrecv/7
    compute n=1250 sum=7836792 min=4807@0 max=124084@17 span=4 bins=12:1246:4807:33540:7441112,16:4:81411:124084:395680
    comm n=1250 sum=24952294565 min=132477@7 max=443929278@19 span=8 bins=16:1015:132477:16144514:3692185315,24:235:17538608:443929278:21260109250
    stat compute_cpu n=1250 sum=6211644 min=3706@0 max=121361@17 span=8 bins=8:1246:3706:32019:5838756,16:4:79930:121361:372888
  time pred=MPI_Sendrecv/8
    compute n=3750 sum=21396160 min=4376@7 max=340597@15 span=4 bins=12:3742:4376:55072:20356480,16:8:67090:340597:1039680
    comm n=3750 sum=29460786048 min=26570@6 max=443644094@20 span=16 bins=0:6:26570:61291:257184,16:3744:75573:443644094:29460528864
    stat compute_cpu n=3750 sum=16273134 min=3255@7 max=338745@15 span=8 bins=8:3744:3255:65517:15500160,16:6:69855:338745:772974
node 9 MPI_Sendrecv site=9 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 4*50 @ *
  count 1*200 @ *
  field peer 6*200 @ <2 0 5 5 4 1> ; 1*200 @ <1 4 5 5>
  field rpeer 24*200 @ <1 0 5 5> ; 19*200 @ <2 1 5 5 4 1>
  field tag 31*200 @ *
  field count 720*200 @ *
  field dtype 14*200 @ *
  field dsize 8*200 @ *
  field rcount 720*200 @ *
  field rdtype 14*200 @ *
  field rdsize 8*200 @ *
  field comm 0*200 @ *
  field rtag 31*200 @ *
  time pred=other
    compute n=5000 sum=29168832 min=4447@12 max=111315@21 span=4 bins=12:4996:4447:61371:28776960,16:4:85557:111315:391872
    comm n=5000 sum=34422511596 min=29864@6 max=108904465@16 span=16 bins=0:4:29864:44226:146536,16:4996:69543:108904465:34422365060
    stat compute_cpu n=5000 sum=22539688 min=3334@12 max=108392@21 span=8 bins=8:4996:3334:59709:22172248,16:4:83644:108392:367440
node 10 MPI_Allreduce site=10 ranks=*
  count 1*50 @ *
  field count 1*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field comm 0*50 @ *
  field redop 3*50 @ *
  time pred=MPI_Sendrecv/9
    compute n=1250 sum=7194710 min=4657@6 max=20600@8 span=2 bins=12:1245:4657:16144:7101480,14:5:17065:20600:93230
    comm n=1250 sum=29112392453 min=14752@5 max=279501999@14 span=16 bins=0:1:14752:14752:14752,16:1249:150674:279501999:29112377701
    stat compute_cpu n=1250 sum=5544818 min=3496@6 max=19099@8 span=4 bins=8:711:3496:4087:2720997,12:539:4096:19099:2823821
node 11 MPI_Finalize site=11 ranks=*
  count 1 @ *
  time pred=MPI_Allreduce/10
    compute n=25 sum=459845 min=13229@24 max=59469@0 span=2 bins=12:12:13229:15833:176328,14:13:16675:59469:283517
    comm n=25 sum=4429 min=130@21 max=291@20 bins=7:21:130:240:3297,8:4:270:291:1132
    stat compute_cpu n=25 sum=409150 min=11458@23 max=57807@0 span=2 bins=12:20:11458:15993:276060,14:5:16966:57807:133090
end
